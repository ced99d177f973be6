import type { Duplex } from 'node:stream';
import ssh2, { type Connection } from 'ssh2';
import { serveDirectTcpip, serveRemoteForwarding, startAgentForwarding } from './forwarding';
import { type GatewaySigner, verifyGatewaySignature } from './gateway-key';
import {
  constantTimeEqual,
  findAccount,
  type LocalAccount,
  passwordMatchesHash,
  verifyLocalPassword,
} from './local-accounts';
import { agentAccount } from './login-environment';
import { serveSession } from './session';

// ssh2 is CommonJS: its classes come from the default export under Node's ESM loader.
const { Server } = ssh2;
type Server = InstanceType<typeof Server>;

export interface AgentSshServerOptions {
  /** PEM private key; the agent's identity key doubles as its SSH host key. */
  hostKey: string | Buffer;
  /**
   * Single-user mode: this password (or a crypt(3) hash of it, starting with `$`) signs
   * anyone in, and every session runs as the agent's own user.
   */
  singleUserPassword?: string;
  /** Signs gateway blobs through the server; without it public-key sign-in is refused. */
  gatewaySigner?: GatewaySigner;
  /** Where the local accounts live (tests point these at fixtures). */
  accountFiles?: { passwd?: string; shadow?: string };
  /** OpenSSH's sftp-server path or 'builtin'; by default the device's sftp-server if present. */
  sftpServer?: string | 'builtin';
  log: (message: string) => void;
}

/**
 * The SSH server the gateway reaches through `{ kind: 'ssh' }` tunnel streams. It never
 * listens on a port: each stream is injected as a connection.
 */
export class AgentSshServer {
  private readonly server: Server;
  private readonly options: AgentSshServerOptions;
  private readonly connections = new Set<Connection>();

  constructor(options: AgentSshServerOptions) {
    this.options = options;
    this.server = new Server({ hostKeys: [options.hostKey] }, (connection) => this.serve(connection));
  }

  /** Serves one SSH connection carried by `stream`. */
  handleStream(stream: Duplex): void {
    this.server.injectSocket(stream as Parameters<Server['injectSocket']>[0]);
  }

  close(): void {
    for (const connection of this.connections) connection.end();
    this.connections.clear();
  }

  private async checkPassword(username: string, password: string): Promise<LocalAccount | undefined> {
    const single = this.options.singleUserPassword;
    if (single !== undefined) {
      const ok = single.startsWith('$')
        ? await passwordMatchesHash(password, single)
        : constantTimeEqual(password, single);
      return ok ? agentAccount() : undefined;
    }
    return verifyLocalPassword(username, password, this.options.accountFiles);
  }

  private async accountFor(username: string): Promise<LocalAccount | undefined> {
    if (this.options.singleUserPassword !== undefined) return agentAccount();
    return findAccount(username, this.options.accountFiles?.passwd);
  }

  private serve(connection: Connection): void {
    const { log } = this.options;
    let account: LocalAccount | undefined;
    this.connections.add(connection);
    connection.on('error', (error) => log(`ssh connection error: ${error.message}`));
    connection.on('close', () => this.connections.delete(connection));

    connection.on('authentication', (ctx) => {
      const methods: Array<'password' | 'publickey'> = this.options.gatewaySigner
        ? ['password', 'publickey']
        : ['password'];
      if (ctx.method === 'password') {
        this.checkPassword(ctx.username, ctx.password).then(
          (found) => {
            account = found;
            if (found) ctx.accept();
            else ctx.reject(methods);
          },
          (error: Error) => {
            log(`password check failed: ${error.message}`);
            ctx.reject(methods);
          },
        );
        return;
      }
      if (ctx.method === 'publickey' && this.options.gatewaySigner) {
        // Only the gateway's Ed25519 key can pass; answer the query phase for it alone.
        if (ctx.key.algo !== 'ssh-ed25519') return ctx.reject(methods);
        if (!ctx.signature || !ctx.blob) return ctx.accept();
        const offer = { key: ctx.key, blob: ctx.blob, signature: ctx.signature };
        Promise.all([
          verifyGatewaySignature(offer, this.options.gatewaySigner),
          this.accountFor(ctx.username),
        ])
          .then(([verified, found]) => {
            account = verified ? found : undefined;
            if (account) ctx.accept();
            else ctx.reject(methods);
          })
          .catch(() => ctx.reject(methods));
        return;
      }
      ctx.reject(methods);
    });

    connection.on('ready', () => {
      const signedIn = account!;
      serveDirectTcpip(connection, log);
      serveRemoteForwarding(connection, signedIn, log);
      connection.on('session', (accept) => {
        serveSession(accept(), {
          account: signedIn,
          log,
          sftpServer: this.options.sftpServer,
          startAgentForwarding: () => startAgentForwarding(connection, signedIn, log),
        });
      });
    });
  }
}
