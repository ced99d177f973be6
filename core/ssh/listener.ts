import type { AddressInfo, Server as NetServer, Socket } from 'node:net';
import ssh2, { type Algorithms, type AuthContext, type Connection } from 'ssh2';
import type { Config } from '../config/schema';
import type { Logger } from '../log';
import type { Metrics } from '../metrics';
import { SshPenalties } from './penalties';
import { parseSshId } from './sshid';
import { StartupLimits } from './startups';

/**
 * What the gateway offers: only algorithms ssh-audit passes without a failure or a warning (checked in
 * test/security/ssh-audit.test.ts): Curve25519 key exchange (no NIST curves), AEAD and CTR ciphers, and
 * encrypt-then-MAC HMACs only (no encrypt-and-MAC). ssh2 adds the strict key exchange marker
 * (kex-strict-s-v00@openssh.com, against Terrapin, CVE-2023-48795) to every key exchange offer, and strict mode
 * holds with every client that offers it too (OpenSSH 9.6 and later).
 */
export const gatewayAlgorithms: Algorithms = {
  kex: ['curve25519-sha256', 'curve25519-sha256@libssh.org'],
  cipher: [
    'chacha20-poly1305@openssh.com',
    'aes256-gcm@openssh.com',
    'aes128-gcm@openssh.com',
    'aes256-ctr',
    'aes192-ctr',
    'aes128-ctr',
  ],
  serverHostKey: ['ssh-ed25519', 'rsa-sha2-512', 'rsa-sha2-256'],
  hmac: ['hmac-sha2-256-etm@openssh.com', 'hmac-sha2-512-etm@openssh.com'],
  compress: ['none'],
};

/**
 * What the listener hands each connection to once its identification line is in: the SSH gateway, which turns it
 * into a device session. A plugin serves it (`RegisterContext.ssh`; the community plugin's gateway); without one
 * every sign-in is refused.
 */
export interface SshConnectionHandler {
  handle(conn: Connection, info: { ip: string; port: number }): void;
}

/** What the listener works with, passed in by the kernel. */
export interface SshListenerDeps {
  /** The instance's SSH host key (PEM). */
  hostKey: string;
  config: Config;
  log: Logger;
  penalties: SshPenalties;
  metrics: Metrics;
  connections: SshConnectionHandler | undefined;
}

/** What the gateway keeps of a TCP connection until it signs in. */
interface Startup {
  source: string;
  timer: NodeJS.Timeout;
  signedIn: boolean;
}

/**
 * The SSH listener: the instance's host key, and before the SSH handshake even starts, the pre-auth limits
 * (OpenSSH's model): the timeout runs from the TCP accept, unauthenticated connections are capped in total
 * (MaxStartups) and per source (PerSourceMaxStartups), and a penalised source is refused at once
 * (PerSourcePenalties). The SSH gateway it hands connections to does the rest.
 */
export class SshListener {
  private readonly server: ssh2.Server;
  private readonly connections = new Set<Connection>();
  private readonly startups: StartupLimits;
  private readonly pending = new Map<Socket, Startup>();
  private readonly config: Config;
  private readonly log: Logger;
  private readonly penalties: SshPenalties;
  private readonly metrics: Metrics;
  private readonly handler: SshConnectionHandler | undefined;

  constructor(deps: SshListenerDeps) {
    const { config } = deps;
    this.config = config;
    this.log = deps.log;
    this.penalties = deps.penalties;
    this.metrics = deps.metrics;
    this.handler = deps.connections;
    this.server = new ssh2.Server(
      {
        hostKeys: [deps.hostKey],
        algorithms: gatewayAlgorithms,
        ident: 'Gatehouse',
        banner: undefined,
      },
      (conn, info) => this.accept(conn, info),
    );
    this.server.on('error', (err: Error) => this.log.error({ err }, 'ssh listener error'));
    this.startups = new StartupLimits(config.ssh.maxStartups, config.ssh.perSourceMaxStartups);
    // ssh2 hands a connection over only after the client's identification line. Its TCP listener is wrapped so the
    // limits and the timeout apply from the accept: a client that connects and says nothing is still timed out.
    const tcp = (this.server as unknown as { _srv: NetServer })._srv;
    const handshake = tcp.listeners('connection') as ((socket: Socket) => void)[];
    tcp.removeAllListeners('connection');
    tcp.on('connection', (socket: Socket) => {
      try {
        this.intercept(socket, () => {
          for (const h of handshake) h.call(tcp, socket);
        });
      } catch (err) {
        this.log.error({ err }, 'ssh accept failed');
        socket.destroy();
      }
    });
  }

  /** The checks at accept; `handshake` starts SSH on the socket when they pass. */
  private intercept(socket: Socket, handshake: () => void): void {
    socket.setNoDelay(true);
    socket.on('error', () => socket.destroy());
    const ip = (socket.remoteAddress ?? '').replace(/^::ffff:/, '');
    const source = SshPenalties.source(ip);
    const verdict = this.startups.admit(source);
    if (verdict !== 'ok') {
      this.log.warn(
        { ip, cap: verdict, unauthenticated: this.startups.size },
        verdict === 'source'
          ? 'ssh connection refused: too many unauthenticated connections from this source'
          : 'ssh connection refused: too many unauthenticated connections',
      );
      this.metrics.sshRefused.inc({
        reason: verdict === 'source' ? 'per-source' : 'startups',
      });
      socket.destroy();
      return;
    }
    const startup: Startup = {
      source,
      signedIn: false,
      timer: setTimeout(() => {
        this.log.info({ ip }, 'ssh connection closed: no sign-in within the pre-auth timeout');
        this.penalties
          .penalise(ip, 'preAuthTimeout')
          .catch((err: unknown) => this.log.warn({ err, ip }, 'ssh penalty not recorded'));
        socket.destroy();
      }, this.config.ssh.preAuthTimeout * 1000).unref(),
    };
    this.pending.set(socket, startup);
    socket.once('close', () => this.signedInOrGone(socket));
    this.penalties.blockedFor(ip).then(
      (seconds) => {
        if (seconds > 0) {
          this.log.warn({ ip, seconds }, 'ssh connection refused: source penalised for failed sign-ins');
          this.metrics.sshRefused.inc({ reason: 'penalty' });
          socket.destroy();
        } else if (!socket.destroyed) handshake();
      },
      (err: unknown) => {
        // Penalties are a shield, not a gate: without the cache the gateway still serves.
        this.log.warn({ err, ip }, 'ssh penalty check failed; connection allowed');
        if (!socket.destroyed) handshake();
      },
    );
  }

  /** The connection signed in or closed: its pre-auth slot and timer are released (once). */
  private signedInOrGone(socket: Socket): void {
    const startup = this.pending.get(socket);
    if (!startup || startup.signedIn) return;
    this.pending.delete(socket);
    startup.signedIn = true;
    clearTimeout(startup.timer);
    this.startups.release(startup.source);
  }

  private accept(conn: Connection, info: { ip: string; port: number }): void {
    this.connections.add(conn);
    const sock = (conn as unknown as { _sock?: Socket })._sock;
    conn.on('error', (err) => this.log.debug({ err: err.message, ip: info.ip }, 'ssh connection error'));
    conn.on('close', () => this.connections.delete(conn));
    if (sock) conn.once('ready', () => this.signedInOrGone(sock));

    if (this.handler) {
      try {
        this.handler.handle(conn, info);
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
    // Connections still signing in (or silent) would hold the listener open until their timeout.
    for (const socket of this.pending.keys()) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
