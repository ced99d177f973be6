import type { Knex } from 'knex';

/**
 * Cloud accounts: the one-time tokens of e-mail verification and password recovery. Only a digest of
 * each token is kept; one outstanding token per user and purpose (a new one replaces the older).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('account_tokens', (t) => {
    t.string('user_id', 24).notNullable().references('users.id').onDelete('CASCADE');
    t.string('purpose', 16).notNullable();
    t.string('digest', 64).notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['user_id', 'purpose']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('account_tokens');
}
