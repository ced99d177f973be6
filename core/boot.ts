import { once } from 'node:events';
import { chmodSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import path from 'node:path';
import Router from '@koa/router';
import {
  type AwilixContainer,
  asClass,
  asValue,
  createContainer,
  InjectionMode,
  type Resolver,
} from 'awilix';
import type { Knex } from 'knex';
import type Koa from 'koa';
import type { Middleware } from 'koa';
import { PasswordHashing } from './auth/password';
import { TokenService } from './auth/tokens';
import { type Cache, createCache } from './cache';
import { ConfigError, editionPlugins, loadConfig } from './config/load';
import type { Config } from './config/schema';
import { Hooks } from './hooks';
import { consoleModulesRouter } from './http/console-modules';
import { keepWithinOpenFiles, openFilesBudget, openFilesLimit } from './http/open-files';
import type { Cradle, RegisteredRoute, RouteDef, RouteSchema } from './http/route';
import { buildRouter, type CallerResolvers } from './http/router';
import { attachUpgrades, createHttpApp, type UpgradeHandler } from './http/server';
import { createLogger, type LogDestination, type Logger } from './log';
import { Mailer } from './mail';
import { Metrics } from './metrics';
import { openapiDocument } from './openapi';
import { operationsRouter } from './operations';
import type { BootContext, InstanceFeatures, PluginManifest, PluginResolver } from './plugin';
import { type SealedColumn, SecretBox, SYSTEM_KEYS } from './secrets';
import { type SshConnectionHandler, SshListener } from './ssh/listener';
import { SshPenalties } from './ssh/penalties';
import { isEmbedded, openDatabase, storeStarted } from './store/db';
import { StoreHealth } from './store/health';
import { loadInstanceKeys } from './store/keys';
import { StoreLock } from './store/lock';
import {
  coreMigrations,
  type MigrationOwner,
  migrateLatest,
  pluginMigrations,
  storeState,
} from './store/migrate';
import { closeObjects, createAjv } from './validation';
import { version } from './version';

/**
 * The kernel's queue of connections not yet accepted, per HTTP listener. After a restart a whole fleet redials at
 * once (agents' availability calls and tunnels): with Node's default of 511 the kernel dropped their SYNs, and each
 * dropped agent waited out a 1 s, then 3 s retransmission (bench/agents/load.ts). The kernel caps it at
 * `net.core.somaxconn` (4096 on current kernels).
 */
const LISTEN_BACKLOG = 4096;

export interface KernelOptions {
  /**
   * Turns each entry of the configuration's `plugins` list into its manifest. Core knows the plugin contract and
   * never a plugin: the host (`server/`) says what an entry names (a bundled plugin, an npm package, a path).
   */
  resolvePlugin: PluginResolver;
  env?: NodeJS.ProcessEnv;
  /** Config values that win over files and environment (tests, CLI flags). */
  overrides?: Record<string, unknown>;
  /** Keep the embedded database in memory (tests). */
  memoryDb?: boolean;
  /** Skip binding the SSH gateway (CLI commands that only need the store). */
  ssh?: boolean;
  /** Skip binding HTTP (CLI commands that only need the store). */
  http?: boolean;
  /** Plugins loaded after the edition's own (tests of core conventions use a fixture plugin this way). */
  extraPlugins?: PluginManifest[];
  /** What this process is, as the embedded store's lock names its holder (`serve`, or the CLI command). */
  command?: string;
  /** Where the log goes instead of standard output (tests keep the last lines to say what a hung step did). */
  logDestination?: LogDestination;
}

/**
 * One Gatehouse server. The boot sequence reads as the table of contents:
 * config -> plugins register -> store -> migrations -> keys -> plugins boot -> HTTP -> SSH -> jobs.
 * `stop` runs the same phases in reverse. Each phase is timed in the log.
 */
export class Kernel {
  readonly config: Config;
  readonly log: Logger;
  readonly hooks = new Hooks();
  readonly metrics = new Metrics();
  readonly container: AwilixContainer<Cradle>;
  readonly routes: RegisteredRoute[] = [];
  readonly features: InstanceFeatures = { authentication: { local: true, saml: false } };
  readonly plugins: PluginManifest[];
  private readonly upgrades: UpgradeHandler[] = [];
  private readonly internalUpgrades: UpgradeHandler[] = [];
  private readonly upgradeStops: (() => Promise<void>)[] = [];
  private readonly early: Middleware[] = [];
  private readonly internalSockets = new WeakSet<Socket>();
  private readonly localSockets = new WeakSet<Socket>();
  private localServer: Server | undefined;
  private koa: Koa | undefined;
  private internalServer: Server | undefined;
  private readonly resolvers: CallerResolvers = {};
  private readonly jobs: NodeJS.Timeout[] = [];
  private readonly running: Promise<void>[] = [];
  private httpServer: Server | undefined;
  private gateway: SshListener | undefined;
  /** The plugin that serves SSH connections (RegisterContext.ssh), at most one. */
  private ssh: { plugin: string; handler: SshConnectionHandler } | undefined;
  private db: Knex | undefined;
  private lock: StoreLock | undefined;
  private cache: Cache | undefined;
  private health: StoreHealth | undefined;
  private secrets: SecretBox | undefined;
  /** Columns whose values are sealed with the operator's key: core's instance keys and what plugins declare. */
  readonly sealedColumns: SealedColumn[] = [SYSTEM_KEYS];
  private started = false;

  private constructor(
    config: Config,
    log: Logger,
    plugins: PluginManifest[],
    private readonly opts: KernelOptions,
  ) {
    this.config = config;
    this.log = log;
    this.plugins = plugins;
    this.container = createContainer<Cradle>({ injectionMode: InjectionMode.PROXY, strict: true });
    this.container.register({
      config: asValue(config),
      log: asValue(log),
      hooks: asValue(this.hooks),
      metrics: asValue(this.metrics),
      features: asValue(this.features),
      passwords: asValue(new PasswordHashing({ config })),
      // Infrastructure every plugin may use: one outgoing mailer (DESIGN.md section 3).
      mailer: asClass(Mailer)
        .singleton()
        .disposer((m) => m.close()),
      kernel: asValue(this),
      caller: asValue({ kind: 'anonymous' }),
      tenantId: asValue(undefined),
    } as Record<string, Resolver<unknown>>);
  }

  /** The configuration of files alone (no environment), for the reference documentation. */
  static defaults(): Config {
    return loadConfig({}, {});
  }

  /** Loads config and plugins and runs every plugin's `register` (no I/O). */
  static async create(opts: KernelOptions): Promise<Kernel> {
    const config = loadConfig(opts.env ?? process.env, opts.overrides ?? {});
    const log = createLogger(config, opts.logDestination);
    const plugins: PluginManifest[] = [];
    const add = (manifest: PluginManifest, entry: string) => {
      if (plugins.some((p) => p.name === manifest.name)) {
        throw new ConfigError(`config: plugins lists "${manifest.name}" twice (entry "${entry}")`);
      }
      for (const dep of manifest.dependsOn) {
        if (!plugins.some((p) => p.name === dep)) {
          throw new ConfigError(`config: plugin "${manifest.name}" needs "${dep}" listed before it`);
        }
      }
      plugins.push(manifest);
    };
    for (const entry of config.plugins) add(await opts.resolvePlugin(entry), entry);
    for (const extra of opts.extraPlugins ?? []) add(extra, extra.name);
    const kernel = new Kernel(config, log, plugins, opts);
    await kernel.timed('register', async () => {
      for (const p of plugins) kernel.registerPlugin(p);
    });
    return kernel;
  }

  private registerPlugin(p: PluginManifest): void {
    const own = (this.config.pluginConfig[p.name] ?? {}) as Record<string, unknown>;
    if (p.configSchema) {
      const validate = createAjv().compile(p.configSchema);
      if (!validate(own)) {
        const e = validate.errors?.[0];
        throw new ConfigError(
          `config: pluginConfig.${p.name}${e?.instancePath.replaceAll('/', '.') ?? ''} ${e?.message}`,
        );
      }
    }
    p.register({
      config: this.config,
      pluginConfig: own,
      log: this.log.child({ plugin: p.name }),
      hooks: this.hooks,
      features: this.features,
      provide: (entries) => this.container.register(entries),
      routes: (defs) => {
        for (const def of defs as RouteDef<RouteSchema>[]) {
          const taken = this.routes.findIndex((r) => r.method === def.method && r.path === def.path);
          if (taken >= 0 && !this.routes[taken]?.standIn) {
            throw new Error(`plugin ${p.name}: route ${def.method} ${def.path} is already registered`);
          }
          // A stand-in (a 501 of a call another edition serves) gives way to the plugin that serves it.
          if (taken >= 0) this.routes.splice(taken, 1);
          // Unknown body fields are refused on every route (see closeObjects), in validation and documents alike.
          const schema = def.schema.body
            ? { ...def.schema, body: closeObjects(def.schema.body) }
            : def.schema;
          this.routes.push({ ...def, schema, plugin: p.name });
        }
      },
      internalUpgrade: (h) => {
        this.internalUpgrades.push(h);
      },
      upgrade: (h, onStop) => {
        this.upgrades.push(h);
        if (onStop) this.upgradeStops.push(onStop);
      },
      middleware: (mw) => this.early.push(mw),
      resolvers: (r) => Object.assign(this.resolvers, r),
      resolve: (name) => this.container.resolve(name),
      ssh: (handler) => {
        if (this.ssh) throw new Error(`plugin ${p.name}: SSH is already served by plugin ${this.ssh.plugin}`);
        this.ssh = { plugin: p.name, handler };
      },
      sealed: (column) => {
        this.sealedColumns.push(column);
      },
    });
  }

  /** The migrations of this edition: core's first, then each plugin's directory in list order. */
  get migrationOwners(): MigrationOwner[] {
    const owners = [coreMigrations];
    for (const p of this.plugins) {
      const own = pluginMigrations(p);
      if (own) owners.push(own);
    }
    return owners;
  }

  /** How this kernel turns plugin entries into manifests (another edition's kernel is built the same way). */
  get resolvePlugin(): PluginResolver {
    return this.opts.resolvePlugin;
  }

  openapi(): Record<string, unknown> {
    // An operator's own list (the edition's plugins and more) is named in the title, so a document exported from
    // it is not mistaken for the edition's own.
    const bundled = editionPlugins(this.config.edition);
    const added = this.plugins.map((p) => p.name).filter((name) => !bundled.includes(name));
    return openapiDocument(this.routes, { edition: this.config.edition, version, added });
  }

  /** Opens the store and migrates it (the part of start that CLI commands need). */
  async openStore(): Promise<Knex> {
    if (this.db) return this.db;
    const db = await this.timed('store', async () => {
      // The embedded database admits one process: a second one (the CLI beside a running server) is refused here.
      if (isEmbedded(this.config) && !this.opts.memoryDb) {
        this.lock = StoreLock.acquire(this.config.dataDir, this.opts.command ?? 'serve');
      }
      const db = openDatabase(this.config, { memory: this.opts.memoryDb ?? false, log: this.log });
      try {
        await storeStarted(db);
        await db.raw('select 1');
      } catch (err) {
        this.lock?.release();
        throw err;
      }
      return db;
    });
    this.db = db;
    this.health = new StoreHealth(db, this.log.child({ part: 'store' }));
    this.cache = createCache(this.config.redis.url, this.config.redis.keyPrefix);
    await this.timed('migrate', async () => {
      const state = await storeState(db, this.migrationOwners);
      if (state.kind !== 'ready') {
        // On PostgreSQL through connections without the request query timeout (the embedded store has one).
        const migrator = this.config.database.url
          ? openDatabase(this.config, { unboundedQueries: true, log: this.log })
          : db;
        try {
          const applied = await migrateLatest(migrator, this.migrationOwners);
          this.log.info({ state: state.kind, applied }, 'store migrated');
        } finally {
          if (migrator !== db) await migrator.destroy();
        }
      }
    });
    let secrets: SecretBox;
    let keys: Awaited<ReturnType<typeof loadInstanceKeys>>;
    try {
      secrets = await this.timed('secrets', async () => {
        const box = await SecretBox.open(this.config, db, this.log.child({ part: 'secrets' }));
        // Values written before secrets were encrypted are sealed now (once; later starts find none).
        for (const where of this.sealedColumns) await box.sealPlainRows(db, where);
        return box;
      });
      keys = await this.timed('keys', () => loadInstanceKeys(db, secrets));
    } catch (err) {
      // A store this server cannot open (a missing or wrong secret key): let go of it, then say why.
      await db.destroy();
      await this.cache.close();
      this.lock?.release();
      this.db = undefined;
      this.cache = undefined;
      this.health = undefined;
      throw err;
    }
    this.secrets = secrets;
    this.container.register({
      db: asValue(db),
      storeHealth: asValue(this.health),
      cache: asValue(this.cache),
      keys: asValue(keys),
      secrets: asValue(secrets),
      tokens: asValue(new TokenService(keys.jwtPrivate, keys.jwtPublic, this.config.auth.tokenTtl)),
      sshPenalties: asValue(new SshPenalties(this.cache, this.config)),
    } as Record<string, Resolver<unknown>>);
    return db;
  }

  /** Seals every secret of the store with a new key (`gatehouse secrets rotate`); see SecretBox.rotate. */
  async rotateSecrets(): Promise<{ from: string[]; to: string; resealed: number }> {
    if (!this.secrets || !this.db) throw new Error('the store is not open');
    return this.secrets.rotate(this.db, this.sealedColumns);
  }

  async start(): Promise<this> {
    const db = await this.openStore();
    const ctx = this.bootContext(db);
    await this.timed('boot', async () => {
      for (const p of this.plugins) await p.boot?.(ctx);
    });
    this.started = true;
    if (this.opts.http !== false) {
      await this.timed('http', async () => {
        // The local socket first: once HTTP answers, a CLI command already reaches this server.
        await this.listenLocal();
        await this.listenHttp();
      });
    }
    if (this.opts.ssh !== false) {
      await this.timed('ssh', async () => {
        const { keys, sshPenalties } = this.container.cradle;
        this.gateway = new SshListener({
          hostKey: keys.sshHostKey,
          config: this.config,
          log: this.log.child({ part: 'ssh' }),
          penalties: sshPenalties,
          metrics: this.metrics,
          connections: this.ssh?.handler,
        });
        await this.gateway.listen(this.config.ssh.port, this.config.ssh.host);
      });
    }
    return this;
  }

  private bootContext(db: Knex): BootContext {
    return {
      config: this.config,
      log: this.log,
      db,
      cache: this.cache as Cache,
      hooks: this.hooks,
      container: this.container,
      every: (seconds, name, fn) => {
        const timer = setInterval(() => {
          const run = fn().catch((err: unknown) => this.log.error({ err, job: name }, 'job failed'));
          this.running.push(run);
          void run.finally(() => this.running.splice(this.running.indexOf(run), 1));
        }, seconds * 1000);
        timer.unref();
        this.jobs.push(timer);
      },
    };
  }

  /** The Koa application every listener serves (built once). */
  private app(): Koa {
    if (this.koa) return this.koa;
    const api = buildRouter(this.routes, this.container, {
      tokens: () => this.container.cradle.tokens,
      resolvers: this.resolvers,
      isInternal: (ctx) => this.internalSockets.has(ctx.req.socket),
      isLocal: (ctx) => this.localSockets.has(ctx.req.socket),
      health: this.health,
    });
    const ops = operationsRouter(this, (ctx) => this.internalSockets.has(ctx.req.socket));
    this.koa = createHttpApp({
      config: this.config,
      log: this.log,
      metrics: this.metrics,
      routers: [ops, api, consoleModulesRouter(this.plugins, this.log)],
      early: this.early,
      health: this.health,
    });
    return this.koa;
  }

  /**
   * The data directory's local socket (`gatehouse.sock`, owner-only): the same application, where requests without
   * credentials are the operator's (`local` calls). The CLI sends its administration commands here, so a command
   * beside a running server goes through the server, with the API's validation and request log.
   */
  async listenLocal(): Promise<void> {
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
    const local = createServer({ keepAliveTimeout: 5_000, requestTimeout: 120_000 }, this.app().callback());
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

  private async listenHttp(): Promise<void> {
    const app = this.app();
    const server = createServer({ keepAliveTimeout: 65_000, requestTimeout: 120_000 }, app.callback());
    attachUpgrades(server, this.upgrades, this.log, this.health);
    const openFiles = openFilesLimit();
    if (openFiles !== undefined) keepWithinOpenFiles(server, openFilesBudget(openFiles), this.log);
    server.listen({ port: this.config.http.port, host: this.config.http.host, backlog: LISTEN_BACKLOG });
    await once(server, 'listening');
    this.httpServer = server;
    // The same application on a loopback listener: only requests that arrive here may make `internal` calls.
    const internal = createServer({ keepAliveTimeout: 65_000, requestTimeout: 120_000 }, app.callback());
    internal.on('connection', (socket: Socket) => this.internalSockets.add(socket));
    attachUpgrades(internal, this.internalUpgrades, this.log, this.health);
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

  /** The address HTTP is bound to (useful with port 0). */
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
  get isStarted(): boolean {
    return this.started;
  }

  /** Reverse of start: jobs, SSH, HTTP (in-flight requests finish), plugins, container, store. */
  async stop(): Promise<void> {
    await this.timed('stop', async () => {
      for (const t of this.jobs.splice(0)) clearInterval(t);
      await Promise.allSettled(this.running);
      await this.gateway?.close();
      // Plugins' stop steps resolve services built on the store. A kernel whose store never finished opening (a
      // command that failed to open it) has none of them, and resolving them here would hide why it failed.
      if (this.secrets) for (const stopUpgraded of this.upgradeStops) await stopUpgraded();
      if (this.localServer) {
        const local = this.localServer;
        const closed = new Promise<void>((resolve) => local.close(() => resolve()));
        local.closeAllConnections();
        await closed;
      }
      if (this.internalServer) {
        const internal = this.internalServer;
        const closed = new Promise<void>((resolve) => internal.close(() => resolve()));
        internal.closeAllConnections();
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
      if (this.started && this.db) {
        const ctx = this.bootContext(this.db);
        for (const p of [...this.plugins].reverse()) await p.shutdown?.(ctx);
      }
      await this.container.dispose();
      this.health?.stop();
      await this.db?.destroy();
      this.lock?.release();
      await this.cache?.close();
    });
  }

  private async timed<T>(phase: string, fn: () => Promise<T>): Promise<T> {
    const started = performance.now();
    const result = await fn();
    this.log.info({ phase, ms: Math.round(performance.now() - started) }, `phase ${phase} done`);
    return result;
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

export { Router };
