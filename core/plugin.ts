import type { TSchema } from '@sinclair/typebox';
import type { AwilixContainer, Resolver } from 'awilix';
import type { Knex } from 'knex';
import type { Middleware } from 'koa';
import type { Cache } from './cache';
import type { Config } from './config/schema';
import type { Hooks } from './hooks';
import type { Cradle, RouteDef, RouteSchema } from './http/route';
import type { CallerResolvers } from './http/router';
import type { UpgradeHandler } from './http/server';
import type { Logger } from './log';
import type { SealedColumn } from './secrets';

/** Things a plugin says about the instance in `GET /info` (e.g. enterprise turns `saml` on when configured). */
export interface InstanceFeatures {
  authentication: { local: boolean; saml: boolean };
}

/** What `register` may declare. It does no I/O. */
export interface RegisterContext {
  config: Config;
  /** This plugin's own settings (`pluginConfig.<name>` in YAML), validated against its `configSchema`. */
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

export interface PluginManifest {
  name: string;
  dependsOn: string[];
  /** Validates `pluginConfig.<name>`; errors name the plugin. */
  configSchema?: TSchema;
  /** Folder under `migrations/` with this plugin's knex migrations; defaults to the plugin name. */
  migrations?: string | false;
  register(ctx: RegisterContext): void;
  boot?(ctx: BootContext): Promise<void>;
  shutdown?(ctx: BootContext): Promise<void>;
}

/** Identity function that types a plugin manifest (STYLE.md example 1). */
export function definePlugin(manifest: PluginManifest): PluginManifest {
  return manifest;
}
