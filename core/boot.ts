import { type AwilixContainer, asValue } from 'awilix';
import type { Knex } from 'knex';
import type Koa from 'koa';
import { editionPlugins, readConfig } from './config/load';
import { pluginSettings } from './config/plugins';
import type { Config } from './config/schema';
import { instanceValue, kernelContainer, provideStore } from './container';
import { Declarations } from './declarations';
import { Hooks } from './hooks';
import { serverApp } from './http/app';
import type { Cradle, RegisteredRoute } from './http/route';
import type { InstanceFeatures } from './instance';
import { Jobs } from './jobs';
import type { KernelOptions } from './kernel-options';
import { Listeners } from './listeners';
import { createLogger, type Logger } from './log';
import { Metrics } from './metrics';
import { openapiDocument } from './openapi';
import type { BootContext, PluginManifest, PluginResolver } from './plugin';
import { resolvePlugins } from './plugin-list';
import { loadInstanceKeys } from './store/keys';
import { type MigrationOwner, migrationOwners } from './store/migrate';
import { connectStore, migrateStore, openSecrets, type Store } from './store/open';

export type { KernelOptions };

/**
 * One Gatehouse server. The boot sequence reads as the table of contents, each phase timed in the log:
 * register (config and plugins) -> store -> migrate -> secrets -> keys -> boot -> http -> ssh.
 * `stop` runs the same phases in reverse.
 */
export class Kernel {
  readonly config: Config;
  readonly log: Logger;
  readonly hooks = new Hooks();
  readonly metrics = new Metrics();
  readonly features: InstanceFeatures = { authentication: { local: true, saml: false } };
  readonly plugins: PluginManifest[];
  readonly container: AwilixContainer<Cradle>;
  private readonly declarations: Declarations;
  private readonly listeners: Listeners;
  private readonly jobs: Jobs;
  private store: Store | undefined;
  private koa: Koa | undefined;
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
    this.jobs = new Jobs(log);
    this.listeners = new Listeners(config, log);
    const { hooks, metrics, features, listeners } = this;
    this.container = kernelContainer({ config, log, hooks, metrics, features });
    this.declarations = new Declarations({ config, log, hooks, features, container: this.container });
    const { version, assets = {} } = opts.installation;
    const { sealedColumns, routes } = this.declarations;
    const about = { version, plugins, sealedColumns, assets, listeners, routes };
    this.container.register({ instance: asValue(instanceValue(about)) });
  }

  /** Loads config and plugins, checks each plugin's settings and runs every plugin's `register` (no I/O). */
  static async create(opts: KernelOptions): Promise<Kernel> {
    const { config, sections } = readConfig(opts.installation, opts.env ?? process.env, opts.overrides ?? {});
    const log = createLogger(config, opts.logDestination);
    const plugins = await resolvePlugins(config.plugins, opts.resolvePlugin, opts.extraPlugins);
    const kernel = new Kernel(config, log, plugins, opts);
    await kernel.timed('register', async () => {
      const settings = pluginSettings(sections, plugins);
      for (const p of plugins) kernel.declarations.register(p, settings.get(p.name) ?? {});
    });
    return kernel;
  }

  /** Opens the store and migrates it (the part of start that CLI commands need). */
  async openStore(): Promise<Knex> {
    if (this.store) return this.store.db;
    const { config, log } = this;
    const store = await this.timed('store', () =>
      connectStore(config, {
        memory: this.opts.memoryDb ?? false,
        command: this.opts.command ?? 'serve',
        log,
      }),
    );
    try {
      await this.timed('migrate', () => migrateStore(store.db, config, this.migrationOwners, log));
      const sealed = this.declarations.sealedColumns;
      const secrets = await this.timed('secrets', () => openSecrets(config, store.db, sealed, log));
      const keys = await this.timed('keys', () => loadInstanceKeys(store.db, secrets));
      provideStore(this.container, { ...store, secrets, keys });
    } catch (err) {
      // A store this server cannot open (a migration that fails, a missing or wrong secret key): let go of it.
      await store.close();
      throw err;
    }
    this.store = store;
    return store.db;
  }

  async start(): Promise<this> {
    const db = await this.openStore();
    await this.timed('boot', async () => {
      for (const p of this.plugins) await p.boot?.(this.bootContext(db));
    });
    this.started = true;
    if (this.opts.http !== false) {
      await this.timed('http', async () => {
        // The local socket first: once HTTP answers, a CLI command already reaches this server.
        await this.listenLocal();
        const { upgrades, internalUpgrades } = this.declarations;
        await this.listeners.listenHttp(
          this.app(),
          { public: upgrades, internal: internalUpgrades },
          this.health,
        );
      });
    }
    if (this.opts.ssh !== false) {
      await this.timed('ssh', async () => {
        const { keys, sshPenalties } = this.container.cradle;
        await this.listeners.listenSsh({
          hostKey: keys.sshHostKey,
          penalties: sshPenalties,
          metrics: this.metrics,
          connections: this.declarations.ssh?.handler,
        });
      });
    }
    return this;
  }

  /** Reverse of start: jobs, SSH, HTTP (in-flight requests finish), plugins, container, store. */
  async stop(): Promise<void> {
    await this.timed('stop', async () => {
      await this.jobs.stop();
      await this.listeners.closeSsh();
      // Plugins' stop steps resolve services built on the store. A kernel whose store never finished opening (a
      // command that failed to open it) has none of them, and resolving them here would hide why it failed.
      if (this.store) for (const stopUpgraded of this.declarations.upgradeStops) await stopUpgraded();
      await this.listeners.closeHttp();
      if (this.started && this.store) {
        const ctx = this.bootContext(this.store.db);
        for (const p of [...this.plugins].reverse()) await p.shutdown?.(ctx);
      }
      await this.container.dispose();
      await this.store?.close();
    });
  }

  /** The data directory's local socket, where the operator's CLI commands reach this server (see Listeners). */
  async listenLocal(): Promise<void> {
    await this.listeners.listenLocal(this.app());
  }

  /** The routes the plugins registered, in registration order. */
  get routes(): RegisteredRoute[] {
    return this.declarations.routes;
  }

  /** The migrations of this edition: core's first, then each plugin's directory in list order. */
  get migrationOwners(): MigrationOwner[] {
    return migrationOwners(this.plugins);
  }

  /** How this kernel turns plugin entries into manifests (another edition's kernel is built the same way). */
  get resolvePlugin(): PluginResolver {
    return this.opts.resolvePlugin;
  }

  openapi(): Record<string, unknown> {
    // An operator's own list (the edition's plugins and more) is named in the title, so a document exported from
    // it is not mistaken for the edition's own.
    const { installation } = this.opts;
    const bundled = editionPlugins(installation, this.config.edition);
    const added = this.plugins.map((p) => p.name).filter((name) => !bundled.includes(name));
    return openapiDocument(this.routes, {
      edition: this.config.edition,
      version: installation.version,
      added,
    });
  }

  /** The document of an edition: this kernel's own when it runs that edition, else one registered for it. */
  async openapiOf(edition: string): Promise<Record<string, unknown>> {
    if (this.config.edition === edition) return this.openapi();
    const other = await Kernel.create({
      env: {},
      installation: this.opts.installation,
      resolvePlugin: this.opts.resolvePlugin,
      overrides: { edition, log: { level: 'silent', pretty: false } },
    });
    return other.openapi();
  }

  /** The address HTTP is bound to (useful with port 0). */
  get httpPort(): number {
    return this.listeners.httpPort;
  }
  get sshPort(): number {
    return this.listeners.sshPort;
  }
  get httpUrl(): string {
    return this.listeners.httpUrl;
  }
  /** Where the internal listener answers (`/internal/...` calls). */
  get internalUrl(): string {
    return this.listeners.internalUrl;
  }
  /** How the other instances of the installation reach this one's internal listener. */
  get internalAddress(): string {
    return this.listeners.internalAddress;
  }
  get isStarted(): boolean {
    return this.started;
  }

  private get health() {
    if (!this.store) throw new Error('the store is not open');
    return this.store.health;
  }

  private bootContext(db: Knex): BootContext {
    return {
      config: this.config,
      log: this.log,
      db,
      cache: this.container.cradle.cache,
      hooks: this.hooks,
      container: this.container,
      every: (seconds, name, fn) => this.jobs.every(seconds, name, fn),
    };
  }

  /** The application every HTTP listener serves (built once, after the store is open). */
  private app(): Koa {
    const { consoleDir, publishedEditions } = this.opts.installation;
    this.koa ??= serverApp({
      config: this.config,
      consoleDir,
      log: this.log,
      metrics: this.metrics,
      container: this.container,
      declarations: this.declarations,
      plugins: this.plugins,
      listeners: this.listeners,
      health: this.health,
      documents: { editions: publishedEditions, of: (edition) => this.openapiOf(edition) },
    });
    return this.koa;
  }

  private async timed<T>(phase: string, fn: () => Promise<T>): Promise<T> {
    const started = performance.now();
    const result = await fn();
    this.log.info({ phase, ms: Math.round(performance.now() - started) }, `phase ${phase} done`);
    return result;
  }
}
