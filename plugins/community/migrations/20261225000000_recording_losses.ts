import type { Knex } from 'knex';

/**
 * A recording never loses output without saying so: output the store could not take, retried in vain or dropped
 * past the bound on what a session keeps for retrying, is counted on its session (`recording_lost_bytes`, from
 * `recording_lost_at`, the first loss), and the console says so on the session's page.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sessions', (t) => {
    t.bigInteger('recording_lost_bytes').notNullable().defaultTo(0);
    t.timestamp('recording_lost_at', { useTz: true }).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sessions', (t) => {
    t.dropColumn('recording_lost_at');
    t.dropColumn('recording_lost_bytes');
  });
}
