import type { Knex } from 'knex';
import type { Caller } from './auth/caller';
import type { PasswordHashing } from './auth/password';
import type { TokenService } from './auth/tokens';
import type { Cache } from './cache';
import type { Config } from './config/schema';
import type { Hooks } from './hooks';
import type { Instance, InstanceFeatures } from './instance';
import type { Logger } from './log';
import type { Mailer } from './mail';
import type { Metrics } from './metrics';
import type { SecretBox } from './secrets';
import type { SshPenalties } from './ssh/penalties';
import type { StoreHealth } from './store/health';
import type { InstanceKeys } from './store/keys';
import type { TenantStore } from './store/tenant';

/**
 * What the container holds. Core fills these; plugins add theirs by declaration merging:
 * `declare module '@gatehouse/core/cradle' { interface Cradle { users: UserService } }`.
 * `caller` and `tenantId` are per request (the request scope); at the root they are anonymous. `tenant` exists in the
 * request scope only.
 */
export interface Cradle {
  config: Config;
  log: Logger;
  hooks: Hooks;
  metrics: Metrics;
  features: InstanceFeatures;
  /** What the running server says about itself: version, plugins, ports, sealed columns. */
  instance: Instance;
  db: Knex;
  /** Whether the store answers; calls that need it answer 503 while it is down. */
  storeHealth: StoreHealth;
  cache: Cache;
  keys: InstanceKeys;
  /** Seals and opens secrets kept in the store with the operator's key. */
  secrets: SecretBox;
  tokens: TokenService;
  /** Password hashing with its concurrency cap and queue (use it, not the bare functions, on request paths). */
  passwords: PasswordHashing;
  /** Per-source penalties of the SSH gateway (failed sign-ins), shared by the instances through the cache. */
  sshPenalties: SshPenalties;
  /** The one outgoing mailer (SMTP). */
  mailer: Mailer;
  caller: Caller;
  tenantId: string | undefined;
  /**
   * The caller's tenant store (request scope only): tenant services take it and so cannot be asked for another
   * tenant's rows. Resolving it for a caller without a namespace is 403.
   */
  tenant: TenantStore;
}
