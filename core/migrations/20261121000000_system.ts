import type { Knex } from 'knex';

/** Instance-wide state: generated keys and one-time facts (such as "setup done"). */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('system_keys', (t) => {
    t.string('name', 64).primary();
    t.text('value').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.schema.createTable('system_state', (t) => {
    t.string('key', 64).primary();
    t.jsonb('value').notNullable().defaultTo('{}');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('system_state');
  await knex.schema.dropTable('system_keys');
}
