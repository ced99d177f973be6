import type { Knex } from 'knex';

/**
 * Which gateway instance carries each session, so a server that starts again after a crash closes at once the
 * sessions it carried before (they cannot be live: it just started), and the other instances close those of an
 * instance that stopped vouching for itself, instead of leaving them active for minutes. Null on rows written
 * before: those are closed by the old rule (no heartbeat for five minutes).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sessions', (t) => {
    t.string('instance', 64);
  });
  await knex.raw('create index sessions_open_instance_idx on sessions (instance) where closed_at is null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists sessions_open_instance_idx');
  await knex.schema.alterTable('sessions', (t) => {
    t.dropColumn('instance');
  });
}
