import type { AwilixContainer, Resolver } from 'awilix';
import type { Middleware } from 'koa';
import type { Config } from './config/schema';
import type { Hooks } from './hooks';
import type { Cradle, RegisteredRoute, RouteDef, RouteSchema } from './http/route';
import type { CallerResolvers } from './http/router';
import type { UpgradeHandler } from './http/server';
import type { InstanceFeatures } from './instance';
import type { Logger } from './log';
import type { PluginManifest, RegisterContext } from './plugin';
import { type SealedColumn, SYSTEM_KEYS } from './secrets';
import type { SshConnectionHandler } from './ssh/listener';
import { closeObjects } from './validation';

/**
 * Everything the plugins declare in `register`, in list order: routes, upgrade handlers, early middleware, how
 * credentials become callers, the SSH connection handler and the columns holding secrets. The listeners and the
 * store read it once register is done.
 */
export class Declarations {
  readonly routes: RegisteredRoute[] = [];
  readonly upgrades: UpgradeHandler[] = [];
  readonly internalUpgrades: UpgradeHandler[] = [];
  /** What ends upgraded connections when the server stops (`RegisterContext.upgrade`'s `onStop`). */
  readonly upgradeStops: (() => Promise<void>)[] = [];
  readonly early: Middleware[] = [];
  readonly resolvers: CallerResolvers = {};
  /** Columns whose values are sealed with the operator's key: core's instance keys and what plugins declare. */
  readonly sealedColumns: SealedColumn[] = [SYSTEM_KEYS];
  /** The plugin that serves SSH connections (RegisterContext.ssh), at most one. */
  ssh: { plugin: string; handler: SshConnectionHandler } | undefined;

  constructor(
    private readonly shared: {
      config: Config;
      log: Logger;
      hooks: Hooks;
      features: InstanceFeatures;
      container: AwilixContainer<Cradle>;
    },
  ) {}

  /** Runs one plugin's `register` with a context whose declarations land here, named after the plugin. */
  register(p: PluginManifest, pluginConfig: Record<string, unknown>): void {
    p.register(this.contextFor(p, pluginConfig));
  }

  private contextFor(p: PluginManifest, pluginConfig: Record<string, unknown>): RegisterContext {
    const { config, log, hooks, features, container } = this.shared;
    return {
      config,
      pluginConfig,
      log: log.child({ plugin: p.name }),
      hooks,
      features,
      provide: (entries: Record<string, Resolver<unknown>>) => container.register(entries),
      routes: (defs) => {
        for (const def of defs as RouteDef<RouteSchema>[]) this.addRoute(p.name, def);
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
      resolve: (name) => container.resolve(name),
      ssh: (handler) => {
        if (this.ssh) throw new Error(`plugin ${p.name}: SSH is already served by plugin ${this.ssh.plugin}`);
        this.ssh = { plugin: p.name, handler };
      },
      sealed: (column) => {
        this.sealedColumns.push(column);
      },
    };
  }

  private addRoute(plugin: string, def: RouteDef<RouteSchema>): void {
    const taken = this.routes.findIndex((r) => r.method === def.method && r.path === def.path);
    if (taken >= 0 && !this.routes[taken]?.standIn) {
      throw new Error(`plugin ${plugin}: route ${def.method} ${def.path} is already registered`);
    }
    // A stand-in (a 501 of a call another edition serves) gives way to the plugin that serves it.
    if (taken >= 0) this.routes.splice(taken, 1);
    // Unknown body fields are refused on every route (see closeObjects), in validation and documents alike.
    const schema = def.schema.body ? { ...def.schema, body: closeObjects(def.schema.body) } : def.schema;
    this.routes.push({ ...def, schema, plugin });
  }
}
