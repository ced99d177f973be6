import type { Knex } from 'knex';

/**
 * The Stripe Checkout sessions (setup mode) a namespace opened to save a card. A session is completed once: the
 * row says whose it is, so another namespace's session id is unknown here, and `completed_at` refuses a replay.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('billing_checkout_sessions', (t) => {
    t.string('session_id', 255).primary();
    t.uuid('tenant_id').notNullable().references('namespaces.tenant_id').onDelete('CASCADE');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('completed_at', { useTz: true });
    t.index(['tenant_id', 'created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('billing_checkout_sessions');
}
