import type { TSchema } from '@sinclair/typebox';
import type { AwilixContainer, Resolver } from 'awilix';
import type { Knex } from 'knex';
import type { Middleware } from 'koa';
import type { Cache } from './cache';
import type { CliCommand } from './cli';
import type { Config } from './config/schema';
import type { Hooks } from './hooks';
import type { Cradle, RouteDef, RouteSchema } from './http/route';
import type { CallerResolvers } from './http/router';
import type { UpgradeHandler } from './http/server';
import type { InstanceFeatures } from './instance';
import type { Logger } from './log';
import type { SealedColumn } from './secrets';
import type { SshConnectionHandler } from './ssh/listener';

export type { InstanceFeatures };

/** What `register` may declare. It does no I/O. */
export interface RegisterContext {
  config: Config;
  /**
   * This plugin's own settings (`pluginConfig.<name>` in YAML, or its `configKey`), validated against its
   * `configSchema`, defaults filled in.
   */
  pluginConfig: Record<string, unknown>;
  log: Logger;
  hooks: Hooks;
  features: InstanceFeatures;
  /** Adds container entries (services, repositories). */
  provide(entries: Record<string, Resolver<unknown>>): void;
  routes(defs: RouteDef<RouteSchema>[] | RouteDef<never>[]): void;
  /**
   * Handlers of HTTP upgrades (WebSocket endpoints such as the agent tunnel). `onStop` runs when the server stops,
   * before HTTP closes: upgraded sockets are no longer HTTP connections, so they would hold the listener open.
   */
  upgrade(handler: UpgradeHandler, onStop?: () => Promise<void>): void;
  /**
   * Handlers of upgrades on the internal listener only (what other instances of the installation ask, such as a
   * stream to an agent whose tunnel is here). Their connections end with the ones `upgrade`'s `onStop` ends.
   */
  internalUpgrade(handler: UpgradeHandler): void;
  /**
   * Koa middleware that runs before body parsing, compression and routing, for requests that are not API calls
   * (the HTTP tunnel proxy answers `<address>.<tunnels domain>` with the raw request). Call `next()` to pass.
   */
  middleware(mw: Middleware): void;
  /** How verified credentials become callers (users, API keys, devices). */
  resolvers(r: CallerResolvers): void;
  /** Resolves a container entry later, at request or boot time (never during register). */
  resolve<K extends keyof Cradle>(name: K): Cradle[K];
  /**
   * Serves core's SSH listener: each connection that passed the pre-auth limits is handed to `handler` (the
   * SSH gateway). One plugin at most; without one every sign-in is refused.
   */
  ssh(handler: SshConnectionHandler): void;
  /**
   * Declares a column holding secrets (seal its values with `secrets.seal` before writing them): plain values left
   * from before are sealed at start, and `gatehouse secrets rotate` seals them all again with a new key.
   */
  sealed(column: SealedColumn): void;
}

/** What `boot` and `shutdown` get: the container is complete and the store is migrated. */
export interface BootContext {
  config: Config;
  log: Logger;
  db: Knex;
  cache: Cache;
  hooks: Hooks;
  container: AwilixContainer<Cradle>;
  /** Runs `fn` every `seconds` until shutdown; errors are logged, never thrown. */
  every(seconds: number, name: string, fn: () => Promise<void>): void;
}

/**
 * A plugin's console module: a folder of prebuilt ES modules (built with `@gatehouse/console/vite`, React and the
 * console kit left to the shell's import map) that the server serves under `/console/plugins`, in a folder named
 * after the plugin, and the file in it whose default export is the module's slots (`defineWebModule`). `GET /info` lists its URL for the console.
 */
export interface PluginConsole {
  /** The folder: an absolute path or a `file:` URL, e.g. `new URL('./web/dist/', import.meta.url)`. */
  dir: string | URL;
  /** The entry file inside `dir`, e.g. `index.js`. */
  entry: string;
}

/**
 * A plugin: one manifest owns everything it adds (see docs/content/developers/architecture.md). The host (`server/`) reads the plugin list of
 * the configuration, loads each entry's manifest and hands the list to the kernel, which registers them in order.
 */
export interface PluginManifest {
  /** Unique among the loaded plugins; names its config (`pluginConfig.<name>`), log lines and migrations. */
  name: string;
  /** Plugins that must be listed (and so registered and booted) before this one. */
  dependsOn: string[];
  /**
   * The schema of this plugin's settings (TypeBox, with a `description` and, where there is one, a `default` for
   * each key): checked once at start, defaults filled in, errors naming the plugin; `ctx.pluginConfig` is the result.
   * `gatehouse reference` lists every key of it under the plugin's name.
   */
  configSchema?: TSchema;
  /**
   * Where the settings sit in the configuration: `pluginConfig.<name>` unless this names a top-level key of their
   * own (the enterprise plugin's `saml`). A key of core's, or one another running plugin reads, stops the start.
   */
  configKey?: string;
  /**
   * Environment variables that set these settings, each with the key inside them that it sets, dotted
   * (`{ GATEHOUSE_SAML_IDP_SSO_URL: 'idpSsoUrl' }`). Read by the configuration loader after the files and before
   * the overrides, converted to the key's type; names start with `GATEHOUSE_` and are not core's or another
   * plugin's. Plugins never read `process.env` themselves.
   */
  configEnv?: Record<string, string>;
  /**
   * The directory of this plugin's knex migrations (absolute path or `file:` URL, e.g.
   * `new URL('./migrations/', import.meta.url)`): files whose names start with a digit, applied in name order and
   * recorded as `<plugin name>/<file>`. Bundled plugins keep theirs in their own folder's `migrations/`.
   */
  migrations?: string | URL;
  /** Commands this plugin adds to the `gatehouse` CLI. */
  cli?: CliCommand[];
  /** The plugin's console module, if it adds screens to the console. */
  console?: PluginConsole;
  /** Declares what the plugin adds (container entries, routes, hooks...). No I/O. */
  register(ctx: RegisterContext): void;
  /** After the store is open and migrated, before HTTP listens (in list order). May do I/O. */
  boot?(ctx: BootContext): Promise<void>;
  /** When the server stops, in reverse list order, after HTTP and SSH closed. */
  shutdown?(ctx: BootContext): Promise<void>;
}

/** Turns one entry of the configuration's `plugins` list into its manifest (what an entry means is the host's). */
export type PluginResolver = (entry: string) => Promise<PluginManifest>;

/** Identity function that types a plugin manifest. */
export function definePlugin(manifest: PluginManifest): PluginManifest {
  return manifest;
}
