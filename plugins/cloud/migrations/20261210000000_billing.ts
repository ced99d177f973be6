import type { Knex } from 'knex';

/**
 * Billing of the cloud edition: a namespace's Stripe customer, its subscription as the provider last
 * told us, the subscription's invoices, the devices kept when a subscription ends, and the provider's webhook events
 * already applied (Stripe delivers an event more than once).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('billing_customers', (t) => {
    t.uuid('tenant_id').primary().references('namespaces.tenant_id').onDelete('CASCADE');
    t.string('customer_id', 255).notNullable().unique();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.schema.createTable('billing_subscriptions', (t) => {
    t.uuid('tenant_id').primary().references('namespaces.tenant_id').onDelete('CASCADE');
    t.string('subscription_id', 255).notNullable().unique();
    // The subscription item whose quantity is the number of accepted devices (usage reported to the provider).
    t.string('item_id', 255);
    // Stripe's status as given (it may add new ones; the API answers those as inactive).
    t.string('status', 32).notNullable();
    t.boolean('cancel_at_period_end').notNullable().defaultTo(false);
    t.timestamp('end_at', { useTz: true });
    // The quantity last reported, so a failed report is sent again at the next chance.
    t.integer('reported_devices');
    // When the provider said what we hold (its event time): an older event arriving late changes nothing.
    t.timestamp('state_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.schema.createTable('billing_invoices', (t) => {
    t.string('id', 255).primary();
    t.uuid('tenant_id').notNullable().references('namespaces.tenant_id').onDelete('CASCADE');
    t.string('subscription_id', 255);
    t.string('status', 16).notNullable();
    t.string('currency', 3).notNullable();
    t.bigInteger('amount').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('state_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['tenant_id', 'created_at']);
  });
  await knex.raw(
    `alter table billing_invoices add constraint billing_invoices_status_check check (status in
      ('draft', 'open', 'paid', 'uncollectible', 'voided'))`,
  );
  await knex.schema.createTable('billing_device_choices', (t) => {
    t.uuid('tenant_id').notNullable().references('namespaces.tenant_id').onDelete('CASCADE');
    t.string('device_uid', 64).notNullable().references('devices.uid').onDelete('CASCADE');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['tenant_id', 'device_uid']);
  });
  await knex.schema.createTable('billing_webhook_events', (t) => {
    t.string('id', 255).primary();
    t.string('type', 255).notNullable();
    t.timestamp('received_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('billing_webhook_events');
  await knex.schema.dropTable('billing_device_choices');
  await knex.schema.dropTable('billing_invoices');
  await knex.schema.dropTable('billing_subscriptions');
  await knex.schema.dropTable('billing_customers');
}
