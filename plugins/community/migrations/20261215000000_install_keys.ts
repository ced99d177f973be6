import type { Knex } from 'knex';

/**
 * Install keys: secrets an administrator hands to the agents of a namespace, so a registration can carry more than
 * the tenant ID everyone sees in the install command. A key is kept only as the SHA-256 of its text (it is random,
 * so a slow hash adds nothing) beside its `lookup`, the public part the key begins with, that finds its row.
 *
 * Devices remember which key admitted them (`install_key_id`, cleared when the key is revoked) and the source and
 * block of addresses they registered from, so a namespace's pending queue can be shared fairly between sources.
 * Rows from before keep empty sources: they count as one block of their own.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('install_keys', (t) => {
    t.uuid('id').primary();
    t.uuid('tenant_id').notNullable().references('namespaces.tenant_id').onDelete('CASCADE');
    t.string('name', 20).notNullable();
    t.string('lookup', 16).notNullable().unique();
    t.string('key_digest', 64).notNullable();
    t.string('created_by', 24).notNullable();
    // Null: never expires.
    t.timestamp('expires_at', { useTz: true });
    // How many devices may register with the key; 0: no limit.
    t.integer('usage_limit').notNullable().defaultTo(0);
    t.integer('used_times').notNullable().defaultTo(0);
    t.timestamp('last_used_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('create unique index install_keys_tenant_name_key on install_keys (tenant_id, lower(name))');
  await knex.raw(`alter table install_keys add constraint install_keys_usage_check
    check (usage_limit >= 0 and used_times >= 0)`);

  await knex.schema.alterTable('devices', (t) => {
    t.uuid('install_key_id').references('install_keys.id').onDelete('SET NULL');
    t.string('registration_source', 64).notNullable().defaultTo('');
    t.string('registration_block', 64).notNullable().defaultTo('');
  });
  // Neither column changes on the availability call, so these indexes keep its updates heap-only.
  await knex.raw(
    `create index devices_install_key_idx on devices (install_key_id) where install_key_id is not null`,
  );
  await knex.raw(
    `create index devices_pending_block_idx on devices (tenant_id, registration_block, created_at)
       where status = 'pending' and install_key_id is null`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists devices_pending_block_idx');
  await knex.raw('drop index if exists devices_install_key_idx');
  await knex.schema.alterTable('devices', (t) => {
    t.dropColumn('registration_block');
    t.dropColumn('registration_source');
    t.dropColumn('install_key_id');
  });
  await knex.schema.dropTable('install_keys');
}
