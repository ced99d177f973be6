import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import knexFactory, { type Knex } from 'knex';
import ClientPgLite from 'knex-pglite';
import pg from 'pg';
import type { Config } from '../config/schema';
import type { Logger } from '../log';
import { DurableNodeFS, durableStartParams } from './pglite';

export type { Knex };

// Return BIGINT (count(*), epoch values) as numbers: every count and epoch Gatehouse stores fits in 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

/**
 * Opens the store: PostgreSQL through `pg` when a URL is configured, otherwise the embedded PGlite in the data
 * directory (`memory` keeps it in memory, for tests). Both speak the PostgreSQL dialect and run the same migrations.
 * The embedded store syncs its commits to disk (core/store/pglite.ts); one process at a time may open it, which the
 * caller ensures with StoreLock (core/store/lock.ts). `unboundedQueries` lifts the query timeout (migrations).
 */
export function openDatabase(
  config: Pick<Config, 'database' | 'dataDir'>,
  opts: { memory?: boolean; unboundedQueries?: boolean; log?: Logger } = {},
): Knex {
  if (config.database.url) {
    const { url, poolMax, connectTimeout, queryTimeout } = config.database;
    return knexFactory({
      client: 'pg',
      // Bounded waits: a PostgreSQL that is down or frozen costs a call seconds (then 503), never minutes.
      connection: {
        connectionString: url,
        connectionTimeoutMillis: connectTimeout * 1000,
        // Migrations may rightly run for minutes on a large store: they get no query timeout.
        ...(opts.unboundedQueries ? {} : { query_timeout: queryTimeout * 1000 }),
        keepAlive: true,
        // No JIT compilation: the server's queries are short, and PostgreSQL's cost model turned JIT on for a deep
        // page of a 100,000-device list, where compiling took 270 ms of a 284 ms query (bench/RESULTS.md).
        options: '-c jit=off',
      },
      pool: { min: 0, max: poolMax },
      acquireConnectionTimeout: (connectTimeout + queryTimeout) * 1000,
      // knex writes connection trouble to the console unless given a logger: into the server's log instead.
      ...(opts.log ? { log: knexLog(opts.log) } : {}),
    });
  }
  // pg_trgm backs the device list's `name contains` filter with an index (migration 20261205000000).
  const extensions = { pg_trgm };
  let pglite: PGlite;
  if (opts.memory) {
    pglite = new PGlite({ extensions });
  } else {
    const dir = embeddedDir(config);
    mkdirSync(dir, { recursive: true });
    pglite = new PGlite({ fs: new DurableNodeFS(dir), startParams: durableStartParams, extensions });
  }
  const connection = { pglite };
  return knexFactory({ client: EmbeddedClient, dialect: 'postgres', connection } as unknown as Knex.Config);
}

/**
 * knex-pglite names a delete's command `DEL` (from knex's method name `del`), so knex's PostgreSQL client does not
 * see a DELETE and answers the raw result instead of the number of rows deleted, as it does on PostgreSQL. The
 * embedded store must answer as PostgreSQL does: a model's `deleteById` says 0 for a row of another tenant.
 */
class EmbeddedClient extends (ClientPgLite as unknown as new (
  config: Knex.Config,
) => {
  processResponse(obj: { method?: string }, runner: unknown): unknown;
}) {
  override processResponse(obj: { method?: string }, runner: unknown): unknown {
    return super.processResponse(obj.method === 'del' ? { ...obj, method: 'delete' } : obj, runner);
  }
}

/**
 * Resolves once the embedded store's PGlite has started (at once on PostgreSQL). On a new data directory the start
 * runs initdb: 9 s on an idle 2-core machine, and more than knex's 60 s acquire timeout on a loaded one, where a CLI
 * command failed so in CI. Awaited before the first query, the start is not counted against that timeout, which
 * stays what a request waits for the connection.
 */
export async function storeStarted(db: Knex): Promise<void> {
  await (db.client as { pglite?: { waitReady: Promise<void> } }).pglite?.waitReady;
}

/** Whether `db` reaches PostgreSQL through `pg` (not the embedded store), so `pg`'s own protocol can be used. */
export function throughPg(db: Knex): boolean {
  return (db.client.config as { client?: unknown }).client === 'pg';
}

export function isEmbedded(config: Pick<Config, 'database'>): boolean {
  return !config.database.url;
}

/** Where the embedded PGlite keeps its files. */
export function embeddedDir(config: Pick<Config, 'dataDir'>): string {
  return path.join(config.dataDir, 'pglite');
}

function knexLog(log: Logger): Knex.Config['log'] {
  return {
    warn: (message: string) => log.warn({ part: 'store' }, message),
    error: (message: string) => log.error({ part: 'store' }, message),
    deprecate: (method: string, alternative: string) =>
      log.warn({ part: 'store' }, `${method} is deprecated; use ${alternative}`),
    debug: (message: string) => log.debug({ part: 'store' }, message),
  };
}
