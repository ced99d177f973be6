import { mkdirSync } from 'node:fs';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import ClientPgLite from 'knex-pglite';
import pg from 'pg';
import type { Config } from '../config/schema';

export type { Knex };

// Return BIGINT (count(*), epoch values) as numbers: every count and epoch Gatehouse stores fits in 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

/**
 * Opens the store: PostgreSQL through `pg` when a URL is configured, otherwise the embedded PGlite in the data
 * directory (`memory` keeps it in memory, for tests). Both speak the PostgreSQL dialect and run the same migrations.
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
    const dir = path.join(config.dataDir, 'pglite');
    mkdirSync(dir, { recursive: true });
    connection = { filename: dir };
  }
  return knexFactory({ client: ClientPgLite, dialect: 'postgres', connection } as Knex.Config);
}

export function isEmbedded(config: Pick<Config, 'database'>): boolean {
  return !config.database.url;
}
