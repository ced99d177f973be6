import type { Knex } from 'knex';

/**
 * The device list's `name contains` filter without reading every device of the namespace.
 *
 * `contains` is an `ILIKE '%value%'`, which no b-tree can answer: both the page and its exact total scanned every
 * device of the namespace in the status asked for (38 ms p50 at 100,000 devices). A trigram index (`pg_trgm`)
 * answers it from the index: the matching rows only. The embedded store loads the extension itself
 * (core/store/db.ts). On a PostgreSQL where the extension is not installed, or the server's role may not create it
 * (it is a trusted extension: the database's CREATE right is enough), the index is left out and the filter scans,
 * as before; the migration says so and names the two statements that add it later.
 */
export async function up(knex: Knex): Promise<void> {
  const { rows } = await knex.raw<{ rows: { available: boolean; installed: boolean; allowed: boolean }[] }>(`
    select exists (select 1 from pg_available_extensions where name = 'pg_trgm') as available,
           exists (select 1 from pg_extension where extname = 'pg_trgm') as installed,
           has_database_privilege(current_database(), 'CREATE') as allowed`);
  const state = rows[0]!;
  if (!state.installed) {
    if (!state.available || !state.allowed) {
      console.warn(
        'gatehouse: the PostgreSQL extension pg_trgm is not available to this role, so the device name filter ' +
          'scans the namespace. To index it, as a superuser: create extension pg_trgm; create index ' +
          'devices_name_trgm_idx on devices using gin (name gin_trgm_ops);',
      );
      return;
    }
    await knex.raw('create extension if not exists pg_trgm');
  }
  // No pending list: every refresh of a device (the availability call, every 30 s) writes its trigrams anew, since
  // `last_seen` is indexed and no refresh is heap-only. With GIN's fast update they would pile up in the pending
  // list until one unlucky refresh merged them all (hundreds of milliseconds at its tail).
  await knex.raw(
    'create index devices_name_trgm_idx on devices using gin (name gin_trgm_ops) with (fastupdate = off)',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists devices_name_trgm_idx');
}
