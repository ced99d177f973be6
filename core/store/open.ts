import type { Knex } from 'knex';
import { type Cache, createCache } from '../cache';
import type { Config } from '../config/schema';
import type { Logger } from '../log';
import { type SealedColumn, SecretBox } from '../secrets';
import { isEmbedded, openDatabase, storeStarted } from './db';
import { StoreHealth } from './health';
import { StoreLock } from './lock';
import { type MigrationOwner, migrateLatest, storeState } from './migrate';

/** The store one server holds: the database, whether it answers, the cache beside it, the embedded store's lock. */
export interface Store {
  db: Knex;
  health: StoreHealth;
  cache: Cache;
  /** Closes what `connectStore` opened, in reverse. */
  close(): Promise<void>;
}

/**
 * Opens the database and checks that it answers, then the cache. The embedded database admits one process: a
 * second one (the CLI beside a running server) is refused here, by the data directory's lock.
 */
export async function connectStore(
  config: Config,
  opts: { memory: boolean; command: string; log: Logger },
): Promise<Store> {
  const lock =
    isEmbedded(config) && !opts.memory ? StoreLock.acquire(config.dataDir, opts.command) : undefined;
  const db = openDatabase(config, { memory: opts.memory, log: opts.log });
  try {
    await storeStarted(db);
    await db.raw('select 1');
  } catch (err) {
    lock?.release();
    throw err;
  }
  const health = new StoreHealth(db, opts.log.child({ part: 'store' }));
  const cache = createCache(config.redis.url, config.redis.keyPrefix);
  return {
    db,
    health,
    cache,
    async close() {
      health.stop();
      await db.destroy();
      lock?.release();
      await cache.close();
    },
  };
}

/** Applies the owners' pending migrations (first run, or an upgrade); a store that is ready is left alone. */
export async function migrateStore(
  db: Knex,
  config: Config,
  owners: MigrationOwner[],
  log: Logger,
): Promise<void> {
  const state = await storeState(db, owners);
  if (state.kind === 'ready') return;
  // On PostgreSQL through connections without the request query timeout (the embedded store has one).
  const migrator = config.database.url ? openDatabase(config, { unboundedQueries: true, log }) : db;
  try {
    const applied = await migrateLatest(migrator, owners);
    log.info({ state: state.kind, applied }, 'store migrated');
  } finally {
    if (migrator !== db) await migrator.destroy();
  }
}

/** Opens the operator's secret box; values written before secrets were encrypted are sealed now (once). */
export async function openSecrets(
  config: Config,
  db: Knex,
  columns: readonly SealedColumn[],
  log: Logger,
): Promise<SecretBox> {
  const box = await SecretBox.open(config, db, log.child({ part: 'secrets' }));
  for (const where of columns) await box.sealPlainRows(db, where);
  return box;
}
