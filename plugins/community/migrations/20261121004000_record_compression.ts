import type { Knex } from 'knex';

/**
 * Recorded terminal output is text that compresses well, written while the session runs in entries of up to 256 K
 * characters. With PostgreSQL's default TOAST compression (pglz) the database spent 0.43 s of CPU per 64 MB
 * recorded, on the same cores as the gateway relaying the session; lz4 spends 0.06 s and stores the same size
 * (measured on PostgreSQL 15, bench/RESULTS.md). Only where the server was built with lz4: elsewhere (PGlite, some
 * builds) the column keeps the default. Rows written before keep their compression; reads handle both.
 */
async function hasLz4(knex: Knex): Promise<boolean> {
  const row = (await knex
    .select(knex.raw(`'lz4' = any(enumvals) as lz4`))
    .from('pg_settings')
    .where('name', 'default_toast_compression')
    .first()) as { lz4?: boolean } | undefined;
  return row?.lz4 === true;
}

export async function up(knex: Knex): Promise<void> {
  if (await hasLz4(knex))
    await knex.raw('alter table session_records alter column message set compression lz4');
}

export async function down(knex: Knex): Promise<void> {
  if (await hasLz4(knex))
    await knex.raw('alter table session_records alter column message set compression default');
}
