import type { Knex } from 'knex';

/** Devices (and containers: the same rows, platform docker) and their HTTP tunnels. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('devices', (t) => {
    t.string('uid', 64).primary();
    t.uuid('tenant_id').notNullable().references('namespaces.tenant_id').onDelete('CASCADE');
    t.string('name', 64).notNullable();
    t.jsonb('identity').notNullable();
    t.jsonb('info').notNullable();
    // Kept apart from info so the device and container lists filter on an indexed column.
    t.string('platform', 16).notNullable().defaultTo('native');
    t.text('public_key').notNullable();
    t.string('hostname', 255).notNullable().defaultTo('');
    t.string('status', 16).notNullable().defaultTo('pending');
    t.timestamp('status_update_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_seen', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // True while a tunnel of this device is up on some server; `online` also needs a recent last_seen.
    t.boolean('connected').notNullable().defaultTo(false);
    t.string('remote_addr', 64).notNullable().defaultTo('');
    t.specificType('tags', 'text[]').notNullable().defaultTo('{}');
    t.boolean('public_url').notNullable().defaultTo(false);
    // Set when an accepted device is removed: it keeps its slot for 720 hours.
    t.timestamp('removed_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // last_seen stays out of every index: the availability call rewrites it every 30 s per device, and an
    // unindexed change is a heap-only (HOT) update that touches no index at all.
    t.index(['tenant_id', 'platform', 'status'], 'devices_list_idx');
  });
  // Room on each page for those heap-only updates.
  await knex.raw('alter table devices set (fillfactor = 80)');
  await knex.raw(`alter table devices add constraint devices_status_check
    check (status in ('accepted', 'rejected', 'pending', 'removed', 'unused'))`);
  // Two accepted devices of a namespace never share a name: `ssh user@namespace.name` must reach one device.
  await knex.raw(
    `create unique index devices_accepted_name_key on devices (tenant_id, lower(name)) where status = 'accepted'`,
  );
  await knex.raw('create index devices_tags_idx on devices using gin (tags)');

  await knex.schema.createTable('tunnels', (t) => {
    t.string('address', 32).primary();
    t.uuid('tenant_id').notNullable().references('namespaces.tenant_id').onDelete('CASCADE');
    t.string('device_uid', 64).notNullable().references('devices.uid').onDelete('CASCADE');
    t.string('host', 64).notNullable();
    t.integer('port').notNullable();
    t.bigInteger('ttl').notNullable();
    // Null for ttl -1 (never expires).
    t.timestamp('expires_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['tenant_id', 'device_uid']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('tunnels');
  await knex.schema.dropTable('devices');
}
