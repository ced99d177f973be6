import type { Knex } from 'knex';

/**
 * API keys and MFA recovery codes. Keys and codes are stored only as SHA-256 digests: both are
 * random with enough entropy that a slow hash adds nothing, and a digest lets the key be found by one index look-up.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('api_keys', (t) => {
    t.string('key_digest', 64).primary();
    t.uuid('tenant_id').notNullable().references('namespaces.tenant_id').onDelete('CASCADE');
    t.string('name', 20).notNullable();
    t.string('created_by', 24).notNullable();
    t.string('role', 16).notNullable();
    // Epoch seconds of expiry; -1 never expires.
    t.bigInteger('expires_in').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('create unique index api_keys_tenant_name_key on api_keys (tenant_id, lower(name))');

  await knex.schema.createTable('mfa_recovery_codes', (t) => {
    t.string('user_id', 24).notNullable().references('users.id').onDelete('CASCADE');
    t.string('code_digest', 64).notNullable();
    t.timestamp('used_at', { useTz: true });
    t.primary(['user_id', 'code_digest']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('mfa_recovery_codes');
  await knex.schema.dropTable('api_keys');
}
