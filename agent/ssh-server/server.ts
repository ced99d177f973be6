import type { Duplex } from 'node:stream';
import type { LocalAccount } from '@gatehouse/protocol/accounts';
import { type GatewaySigner, verifyGatewaySignature } from '@gatehouse/protocol/gateway-key';
import ssh2, { type Connection } from 'ssh2';
import { DeviceSignIn, type SignInOptions } from '../sign-in';
import { serveDirectTcpip, serveRemoteForwarding, startAgentForwarding } from './forwarding';
import { serveSession } from './session';

// ssh2 is CommonJS: its classes come from the default export under Node's ESM loader.
const { Server } = ssh2;
type Server = InstanceType<typeof Server>;

export interface AgentSshServerOptions extends SignInOptions {
  /** PEM private key; the agent's identity key doubles as its SSH host key. */
  hostKey: string | Buffer;
  /** Signs gateway blobs through the server; without it public-key sign-in is refused. */
  gatewaySigner?: GatewaySigner;
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
  private readonly signIn: DeviceSignIn;

  constructor(options: AgentSshServerOptions) {
    this.options = options;
    this.signIn = new DeviceSignIn(options);
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
        this.signIn.password(ctx.username, ctx.password).then(
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
          this.signIn.account(ctx.username),
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
