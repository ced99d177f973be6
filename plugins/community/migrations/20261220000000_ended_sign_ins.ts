import type { Knex } from 'knex';

/**
 * Sign-ins ended before their tokens expire (sign-out). Every user token carries the id of the sign-in it belongs
 * to; one row here refuses all of them, on every instance. A row is kept until the last token it can refuse has
 * expired (`expires_at`), then swept; it goes with its user.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('ended_sign_ins', (t) => {
    t.string('sign_in', 32).primary();
    t.string('user_id', 24).notNullable().references('users.id').onDelete('CASCADE');
    t.timestamp('ended_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.index(['expires_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('ended_sign_ins');
}
