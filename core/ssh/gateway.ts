import type { AddressInfo } from 'node:net';
import type { AwilixContainer } from 'awilix';
import ssh2, { type Algorithms, type AuthContext, type Connection } from 'ssh2';
import type { Config } from '../config/schema';
import type { Cradle } from '../cradle';
import type { Logger } from '../log';
import { parseSshId } from './sshid';

/**
 * Modern algorithms only. ssh2 adds the strict key exchange marker (Terrapin, CVE-2023-48795) whenever the client
 * offers it.
 */
export const gatewayAlgorithms: Algorithms = {
  kex: ['curve25519-sha256', 'curve25519-sha256@libssh.org', 'ecdh-sha2-nistp256', 'ecdh-sha2-nistp384'],
  cipher: [
    'chacha20-poly1305@openssh.com',
    'aes128-gcm@openssh.com',
    'aes256-gcm@openssh.com',
    'aes128-ctr',
    'aes256-ctr',
  ],
  serverHostKey: ['ssh-ed25519', 'ecdsa-sha2-nistp256', 'rsa-sha2-512', 'rsa-sha2-256'],
  hmac: ['hmac-sha2-256-etm@openssh.com', 'hmac-sha2-512-etm@openssh.com', 'hmac-sha2-256', 'hmac-sha2-512'],
  compress: ['none'],
};

/**
 * What turns a gateway connection into a device session. The community plugin provides it (devices, public keys,
 * firewall, sessions); without it every sign-in is refused with a clear message.
 */
export interface GatewayConnector {
  handle(conn: Connection, info: { ip: string; port: number }): void;
}

/** The SSH gateway listener: host key from the store, pre-auth timeout, and the connector doing the rest. */
export class SshGateway {
  private readonly server: ssh2.Server;
  private readonly connections = new Set<Connection>();

  constructor(
    private readonly container: AwilixContainer<Cradle>,
    private readonly config: Config,
    private readonly log: Logger,
  ) {
    this.server = new ssh2.Server(
      {
        hostKeys: [container.cradle.keys.sshHostKey],
        algorithms: gatewayAlgorithms,
        ident: 'Gatehouse',
        banner: undefined,
      },
      (conn, info) => this.accept(conn, info),
    );
    this.server.on('error', (err: Error) => this.log.error({ err }, 'ssh listener error'));
  }

  private accept(conn: Connection, info: { ip: string; port: number }): void {
    this.connections.add(conn);
    const sock = (conn as unknown as { _sock?: { setNoDelay?: (v: boolean) => void } })._sock;
    sock?.setNoDelay?.(true);
    conn.on('error', (err) => this.log.debug({ err: err.message, ip: info.ip }, 'ssh connection error'));
    conn.on('close', () => this.connections.delete(conn));
    const timer = setTimeout(() => conn.end(), this.config.ssh.preAuthTimeout * 1000).unref();
    conn.once('ready', () => clearTimeout(timer));
    conn.once('close', () => clearTimeout(timer));

    if (this.container.hasRegistration('gatewayConnector')) {
      try {
        (this.container.resolve('gatewayConnector' as never) as GatewayConnector).handle(conn, info);
      } catch (err) {
        // One connection's failure closes that connection, never the listener or the process.
        this.log.error({ err, ip: info.ip }, 'ssh connection could not be handled');
        conn.end();
      }
      return;
    }
    conn.on('authentication', (ctx: AuthContext) => {
      const target = parseSshId(ctx.username);
      if (!target) {
        ctx.reject(['password', 'publickey']);
        return;
      }
      ctx.reject();
    });
  }

  listen(port: number, host: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
  }

  get port(): number {
    return (this.server.address() as AddressInfo | null)?.port ?? 0;
  }

  async close(): Promise<void> {
    for (const c of this.connections) c.end();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
