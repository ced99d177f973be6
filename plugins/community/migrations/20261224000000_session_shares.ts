import type { Knex } from 'knex';

/**
 * Share links: read-only, time-limited links to a live recorded session, for people without an account. The link's
 * token is kept only as its SHA-256 (`token_hash`), so the table gives no link away. A link is revoked by stamping
 * `revoked_at`, never deleted while its session is kept: its uses (how many, the last) stay with it, and each use is
 * an event of the session too.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('session_shares', (t) => {
    t.string('id', 32).primary();
    t.uuid('tenant_id').notNullable().references('namespaces.tenant_id').onDelete('CASCADE');
    t.string('session_uid', 64).notNullable().references('uid').inTable('sessions').onDelete('CASCADE');
    t.string('token_hash', 64).notNullable().unique();
    t.string('created_by', 64).notNullable();
    t.string('created_by_name', 255).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('revoked_at', { useTz: true }).nullable();
    t.integer('uses').notNullable().defaultTo(0);
    t.timestamp('last_used_at', { useTz: true }).nullable();
    t.index(['tenant_id', 'session_uid']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('session_shares');
}
