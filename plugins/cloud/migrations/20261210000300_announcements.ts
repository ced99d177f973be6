import type { Knex } from 'knex';

/** Announcements of the instance's administrators: title up to 90 characters, Markdown content. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('announcements', (t) => {
    t.uuid('uuid').primary();
    t.string('title', 90).notNullable();
    t.text('content').notNullable();
    t.timestamp('date', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['date']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('announcements');
}
