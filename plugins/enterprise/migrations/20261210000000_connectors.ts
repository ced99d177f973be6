import type { Knex } from 'knex';

/**
 * Container-engine connectors and which connector each container device came from. A
 * container is a row of `devices` (kind `container`) like any device, so acceptance, the device limit, tags,
 * filters and sessions treat it as one; `connector_containers` says which engine and container it stands for.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('connectors', (t) => {
    t.uuid('uid').primary();
    t.uuid('tenant_id').notNullable().references('namespaces.tenant_id').onDelete('CASCADE');
    t.boolean('enable').notNullable().defaultTo(true);
    t.string('address', 255).notNullable();
    t.integer('port').notNullable();
    t.boolean('secure').notNullable().defaultTo(false);
    // The CA, certificate and key (PEM) as one JSON text, sealed with the operator's key (core/secrets.ts).
    t.text('tls');
    // The last connection attempt: `connected` or `disconnected`, and what the engine or the network said.
    t.string('status_state', 16).notNullable().defaultTo('disconnected');
    t.text('status_message').notNullable().defaultTo('');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['tenant_id', 'created_at']);
  });
  await knex.raw(
    `alter table connectors add constraint connectors_port_check check (port between 0 and 65535)`,
  );

  await knex.schema.createTable('connector_containers', (t) => {
    t.string('device_uid', 64).primary().references('devices.uid').onDelete('CASCADE');
    t.uuid('connector_uid').notNullable().references('connectors.uid').onDelete('CASCADE');
    // The engine's container id (64 hex on Docker and podman).
    t.string('container_id', 128).notNullable();
    t.boolean('running').notNullable().defaultTo(false);
    t.index(['connector_uid', 'running']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('connector_containers');
  await knex.schema.dropTable('connectors');
}
