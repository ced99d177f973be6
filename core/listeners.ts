import { once } from 'node:events';
import { chmodSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import path from 'node:path';
import type Koa from 'koa';
import type { Context } from 'koa';
import type { Config } from './config/schema';
import { keepWithinOpenFiles, openFilesBudget, openFilesLimit } from './http/open-files';
import { attachUpgrades, type UpgradeHandler } from './http/server';
import type { Logger } from './log';
import type { Metrics } from './metrics';
import { type SshConnectionHandler, SshListener } from './ssh/listener';
import type { SshPenalties } from './ssh/penalties';
import type { StoreHealth } from './store/health';

/**
 * The kernel's queue of connections not yet accepted, per HTTP listener. After a restart a whole fleet redials at
 * once (agents' availability calls and tunnels): with Node's default of 511 the kernel dropped their SYNs, and each
 * dropped agent waited out a 1 s, then 3 s retransmission (bench/agents/load.ts). The kernel caps it at
 * `net.core.somaxconn` (4096 on current kernels).
 */
const LISTEN_BACKLOG = 4096;

/**
 * The sockets one server listens on: the public HTTP listener (API, console, agent tunnels), the internal one
 * (calls only other instances make), the data directory's local socket (the operator's CLI), and the SSH gateway.
 * All HTTP listeners serve the same application; which one a request came in on decides whether it may make
 * `internal` or `local` calls.
 */
export class Listeners {
  private readonly internalSockets = new WeakSet<Socket>();
  private readonly localSockets = new WeakSet<Socket>();
  private httpServer: Server | undefined;
  private internalServer: Server | undefined;
  private localServer: Server | undefined;
  private gateway: SshListener | undefined;

  constructor(
    private readonly config: Config,
    private readonly log: Logger,
  ) {}

  /** Whether a request came in on the internal listener (only those may make `internal` calls). */
  readonly isInternal = (ctx: Context): boolean => this.internalSockets.has(ctx.req.socket);
  /** Whether a request came in on the local socket (the operator's `local` calls). */
  readonly isLocal = (ctx: Context): boolean => this.localSockets.has(ctx.req.socket);

  /**
   * The data directory's local socket (`gatehouse.sock`, owner-only): the same application, where requests without
   * credentials are the operator's (`local` calls). The CLI sends its administration commands here, so a command
   * beside a running server goes through the server, with the API's validation and request log.
   */
  async listenLocal(app: Koa): Promise<void> {
    const file = localSocketPath(this.config.dataDir);
    if (file.length > 100) {
      this.log.warn(
        { file },
        'data directory path too long for a local socket; the CLI cannot reach this server',
      );
      return;
    }
    mkdirSync(this.config.dataDir, { recursive: true });
    if (existsSync(file)) {
      // A socket another live server answers on is left alone; one left by a killed process is replaced.
      if (await answers(file)) {
        this.log.warn({ file }, 'another server answers on the local socket; this one does not listen there');
        return;
      }
      rmSync(file, { force: true });
    }
    const local = createServer({ keepAliveTimeout: 5_000, requestTimeout: 120_000 }, app.callback());
    local.on('connection', (socket: Socket) => this.localSockets.add(socket));
    // Owner-only from its creation (the bind happens within listen); the mask is put back at once.
    const umask = process.umask(0o177);
    try {
      local.listen(file);
    } finally {
      process.umask(umask);
    }
    await once(local, 'listening');
    chmodSync(file, 0o600);
    this.localServer = local;
  }

  /** The public listener, then the internal one on loopback, each with its plugins' upgrade handlers. */
  async listenHttp(
    app: Koa,
    upgrades: { public: UpgradeHandler[]; internal: UpgradeHandler[] },
    health: StoreHealth | undefined,
  ): Promise<void> {
    const server = createServer({ keepAliveTimeout: 65_000, requestTimeout: 120_000 }, app.callback());
    attachUpgrades(server, upgrades.public, this.log, health);
    const openFiles = openFilesLimit();
    if (openFiles !== undefined) keepWithinOpenFiles(server, openFilesBudget(openFiles), this.log);
    server.listen({ port: this.config.http.port, host: this.config.http.host, backlog: LISTEN_BACKLOG });
    await once(server, 'listening');
    this.httpServer = server;
    // The same application on a loopback listener: only requests that arrive here may make `internal` calls.
    const internal = createServer({ keepAliveTimeout: 65_000, requestTimeout: 120_000 }, app.callback());
    internal.on('connection', (socket: Socket) => this.internalSockets.add(socket));
    attachUpgrades(internal, upgrades.internal, this.log, health);
    internal.listen({
      port: this.config.internal.port,
      host: this.config.internal.host,
      backlog: LISTEN_BACKLOG,
    });
    await once(internal, 'listening');
    this.internalServer = internal;
    this.log.info(
      { url: this.httpUrl, internal: this.internalUrl, ssh: this.config.ssh.port, openFilesLimit: openFiles },
      'listening',
    );
  }

  /** The SSH gateway: core's listener with its pre-auth limits, handing connections to the plugin that serves them. */
  async listenSsh(deps: {
    hostKey: string;
    penalties: SshPenalties;
    metrics: Metrics;
    connections: SshConnectionHandler | undefined;
  }): Promise<void> {
    this.gateway = new SshListener({
      ...deps,
      config: this.config,
      log: this.log.child({ part: 'ssh' }),
    });
    await this.gateway.listen(this.config.ssh.port, this.config.ssh.host);
  }

  async closeSsh(): Promise<void> {
    await this.gateway?.close();
  }

  /** The local socket and the internal listener at once; the public one once its requests in flight are answered. */
  async closeHttp(): Promise<void> {
    for (const other of [this.localServer, this.internalServer]) {
      if (!other) continue;
      const closed = new Promise<void>((resolve) => other.close(() => resolve()));
      other.closeAllConnections();
      await closed;
    }
    if (this.httpServer) {
      const server = this.httpServer;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Keep-alive connections turn idle once their in-flight request is answered; close them as they do.
      const sweep = setInterval(() => server.closeIdleConnections(), 25);
      const force = setTimeout(() => server.closeAllConnections(), 10_000).unref();
      await closed;
      clearInterval(sweep);
      clearTimeout(force);
    }
  }

  /** The port HTTP is bound to (useful with port 0). */
  get httpPort(): number {
    return (this.httpServer?.address() as AddressInfo | null)?.port ?? this.config.http.port;
  }
  get sshPort(): number {
    return this.gateway?.port ?? this.config.ssh.port;
  }
  get httpUrl(): string {
    return `http://127.0.0.1:${this.httpPort}`;
  }
  /** Where the internal listener answers (`/internal/...` calls). */
  get internalUrl(): string {
    const port = (this.internalServer?.address() as AddressInfo | null)?.port ?? this.config.internal.port;
    return `http://${this.config.internal.host}:${port}`;
  }
  /** How the other instances of the installation reach this one's internal listener. */
  get internalAddress(): string {
    return this.config.internal.address ?? this.internalUrl;
  }
}

/** Where a server listens for the operator's commands: the data directory's `gatehouse.sock`. */
export function localSocketPath(dataDir: string): string {
  return path.resolve(dataDir, 'gatehouse.sock');
}

/** Whether a live process accepts connections on the unix socket. */
export function answers(file: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(file);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
