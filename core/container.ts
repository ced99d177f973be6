import {
  type AwilixContainer,
  asClass,
  asValue,
  createContainer,
  InjectionMode,
  type Resolver,
} from 'awilix';
import { PasswordHashing } from './auth/password';
import { TokenService } from './auth/tokens';
import type { Cache } from './cache';
import type { Config } from './config/schema';
import type { Cradle } from './cradle';
import type { Hooks } from './hooks';
import { consoleModuleEntries } from './http/console-modules';
import type { Instance, InstanceFeatures } from './instance';
import type { Logger } from './log';
import { Mailer } from './mail';
import type { Metrics } from './metrics';
import { type PermissionRow, permissionMatrix, type RouteAccess } from './permissions';
import type { PluginManifest } from './plugin';
import type { SealedColumn, SecretBox } from './secrets';
import { SshPenalties } from './ssh/penalties';
import type { StoreHealth } from './store/health';
import type { InstanceKeys } from './store/keys';

/**
 * The kernel's container (Awilix, strict: a singleton may not depend on anything shorter-lived) with what core
 * gives every plugin before the store is open (the kernel adds `instance`). `caller` and `tenantId` are the
 * anonymous defaults a request scope replaces.
 */
export function kernelContainer(core: {
  config: Config;
  log: Logger;
  hooks: Hooks;
  metrics: Metrics;
  features: InstanceFeatures;
}): AwilixContainer<Cradle> {
  const container = createContainer<Cradle>({ injectionMode: InjectionMode.PROXY, strict: true });
  container.register({
    config: asValue(core.config),
    log: asValue(core.log),
    hooks: asValue(core.hooks),
    metrics: asValue(core.metrics),
    features: asValue(core.features),
    passwords: asValue(new PasswordHashing({ config: core.config })),
    // Infrastructure every plugin may use: one outgoing mailer.
    mailer: asClass(Mailer)
      .singleton()
      .disposer((m) => m.close()),
    caller: asValue({ kind: 'anonymous' }),
    tenantId: asValue(undefined),
  } as Record<string, Resolver<unknown>>);
  return container;
}

/** What core adds once the store is open: the store itself, the cache, the instance's keys and what needs them. */
export function provideStore(
  container: AwilixContainer<Cradle>,
  store: { db: Cradle['db']; health: StoreHealth; cache: Cache; secrets: SecretBox; keys: InstanceKeys },
): void {
  const { config } = container.cradle;
  const { keys } = store;
  container.register({
    db: asValue(store.db),
    storeHealth: asValue(store.health),
    cache: asValue(store.cache),
    keys: asValue(keys),
    secrets: asValue(store.secrets),
    tokens: asValue(new TokenService(keys.jwtPrivate, keys.jwtPublic, config.auth.tokenTtl)),
    sshPenalties: asValue(new SshPenalties(store.cache, config)),
  } as Record<string, Resolver<unknown>>);
}

/** The container's `instance`: what the running server is; its ports are the listeners' whenever they are read. */
export function instanceValue(about: {
  version: string;
  plugins: readonly PluginManifest[];
  sealedColumns: readonly SealedColumn[];
  assets: Readonly<Record<string, string>>;
  listeners: Pick<Instance, 'httpPort' | 'sshPort' | 'internalAddress'>;
  /** The declared routes; complete once `register` has run, which is before anything reads `permissions`. */
  routes: readonly RouteAccess[];
}): Instance {
  const { listeners } = about;
  let permissions: PermissionRow[] | undefined;
  return {
    version: about.version,
    plugins: about.plugins.map((p) => p.name),
    consoleModules: consoleModuleEntries(about.plugins),
    sealedColumns: about.sealedColumns,
    assets: about.assets,
    get httpPort() {
      return listeners.httpPort;
    },
    get sshPort() {
      return listeners.sshPort;
    },
    get internalAddress() {
      return listeners.internalAddress;
    },
    get permissions() {
      permissions ??= permissionMatrix(about.routes);
      return permissions;
    },
  };
}
