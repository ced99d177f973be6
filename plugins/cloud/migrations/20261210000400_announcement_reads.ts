import type { Knex } from 'knex';

/**
 * Which announcements each user has seen, so the console shows a new one once per user whatever browser they use.
 * A row goes with its user or its announcement.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('announcement_reads', (t) => {
    t.string('user_id', 24).notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.uuid('announcement_uuid').notNullable().references('uuid').inTable('announcements').onDelete('CASCADE');
    t.timestamp('seen_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['user_id', 'announcement_uuid']);
    t.index(['announcement_uuid']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('announcement_reads');
}
