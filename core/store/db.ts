import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import knexFactory, { type Knex } from 'knex';
import ClientPgLite from 'knex-pglite';
import pg from 'pg';
import type { Config } from '../config/schema';
import { DurableNodeFS, durableStartParams } from './pglite';

export type { Knex };

// Return BIGINT (count(*), epoch values) as numbers: every count and epoch Gatehouse stores fits in 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

/**
 * Opens the store: PostgreSQL through `pg` when a URL is configured, otherwise the embedded PGlite in the data
 * directory (`memory` keeps it in memory, for tests). Both speak the PostgreSQL dialect and run the same migrations.
 * The embedded store syncs its commits to disk (core/store/pglite.ts); one process at a time may open it, which the
 * caller ensures with StoreLock (core/store/lock.ts).
 */
export function openDatabase(
  config: Pick<Config, 'database' | 'dataDir'>,
  opts: { memory?: boolean } = {},
): Knex {
  if (config.database.url) {
    return knexFactory({
      client: 'pg',
      connection: config.database.url,
      pool: { min: 0, max: config.database.poolMax },
      acquireConnectionTimeout: 10_000,
    });
  }
  let connection: object = {};
  if (!opts.memory) {
    const dir = embeddedDir(config);
    mkdirSync(dir, { recursive: true });
    connection = { pglite: new PGlite({ fs: new DurableNodeFS(dir), startParams: durableStartParams }) };
  }
  return knexFactory({ client: ClientPgLite, dialect: 'postgres', connection } as Knex.Config);
}

export function isEmbedded(config: Pick<Config, 'database'>): boolean {
  return !config.database.url;
}

/** Where the embedded PGlite keeps its files. */
export function embeddedDir(config: Pick<Config, 'dataDir'>): string {
  return path.join(config.dataDir, 'pglite');
}
