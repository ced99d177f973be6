import type { Knex } from 'knex';

/**
 * What the SSH gateway keeps: public keys and firewall rules of a namespace, and every connection as a session with
 * its events and recorded terminal output. Device uids are not foreign keys: the devices
 * table belongs to another migration, and a session's history outlives the device row's changes.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('public_keys', (t) => {
    t.uuid('tenant_id').notNullable().references('namespaces.tenant_id').onDelete('CASCADE');
    t.string('fingerprint', 47).notNullable();
    t.text('data').notNullable();
    t.string('name', 255).notNullable();
    t.text('username').notNullable();
    // Filter: a hostname regular expression, or 1 to 3 tags (exactly one of the two is set).
    t.text('filter_hostname');
    t.specificType('filter_tags', 'text[]');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['tenant_id', 'fingerprint']);
  });

  await knex.schema.createTable('firewall_rules', (t) => {
    t.string('id', 24).primary();
    t.uuid('tenant_id').notNullable().references('namespaces.tenant_id').onDelete('CASCADE');
    t.integer('priority').notNullable();
    t.string('action', 8).notNullable();
    t.boolean('active').notNullable().defaultTo(true);
    t.text('source_ip').notNullable();
    t.text('username').notNullable();
    t.text('filter_hostname');
    t.specificType('filter_tags', 'text[]');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['tenant_id', 'priority']);
  });
  await knex.raw(
    "alter table firewall_rules add constraint firewall_rules_action_check check (action in ('allow', 'deny'))",
  );

  await knex.schema.createTable('sessions', (t) => {
    t.string('uid', 64).primary();
    t.uuid('tenant_id').notNullable().references('namespaces.tenant_id').onDelete('CASCADE');
    t.string('device_uid', 64).notNullable();
    t.string('username', 255).notNullable();
    t.string('ip_address', 64).notNullable();
    t.timestamp('started_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_seen', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('closed_at', { useTz: true });
    t.boolean('authenticated').notNullable().defaultTo(false);
    t.boolean('recorded').notNullable().defaultTo(false);
    t.string('type', 8).notNullable().defaultTo('term');
    t.string('term', 64).notNullable().defaultTo('');
    t.jsonb('position')
      .notNullable()
      .defaultTo(JSON.stringify({ latitude: 0, longitude: 0 }));
    t.index(['tenant_id', 'started_at']);
    t.index(['device_uid']);
  });
  // Live sessions are counted often (stats, device pages): keep that cheap.
  await knex.raw('create index sessions_open_idx on sessions (tenant_id) where closed_at is null');

  await knex.schema.createTable('session_events', (t) => {
    t.bigIncrements('id');
    t.string('session_uid', 64).notNullable().references('sessions.uid').onDelete('CASCADE');
    t.string('type', 64).notNullable();
    t.timestamp('timestamp', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.jsonb('data');
    t.integer('seat').notNullable().defaultTo(0);
    t.index(['session_uid', 'id']);
  });

  await knex.schema.createTable('session_records', (t) => {
    t.bigIncrements('id');
    t.string('session_uid', 64).notNullable().references('sessions.uid').onDelete('CASCADE');
    t.uuid('tenant_id').notNullable();
    t.integer('seat').notNullable();
    t.text('message').notNullable();
    t.timestamp('time', { useTz: true }).notNullable();
    t.integer('width').notNullable();
    t.integer('height').notNullable();
    t.index(['session_uid', 'seat', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('session_records');
  await knex.schema.dropTable('session_events');
  await knex.schema.dropTable('sessions');
  await knex.schema.dropTable('firewall_rules');
  await knex.schema.dropTable('public_keys');
}
