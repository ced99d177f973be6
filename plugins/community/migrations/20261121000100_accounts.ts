import type { Knex } from 'knex';

/** Users, namespaces (tenants) and their members. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('users', (t) => {
    t.string('id', 24).primary();
    t.string('name', 64).notNullable();
    t.string('username', 30).notNullable();
    t.string('email', 255).notNullable();
    t.string('recovery_email', 255);
    t.text('password_hash').notNullable();
    t.timestamp('password_changed_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.boolean('mfa_enabled').notNullable().defaultTo(false);
    t.text('mfa_secret');
    t.integer('max_namespaces').notNullable().defaultTo(-1);
    t.string('status', 16).notNullable().defaultTo('confirmed');
    t.boolean('email_marketing').notNullable().defaultTo(false);
    t.uuid('preferred_namespace');
    t.timestamp('last_login', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('create unique index users_username_key on users (lower(username))');
  await knex.raw('create unique index users_email_key on users (lower(email))');

  await knex.schema.createTable('namespaces', (t) => {
    t.uuid('tenant_id').primary();
    t.string('name', 64).notNullable();
    t.string('owner', 24).notNullable().references('users.id').onDelete('RESTRICT');
    t.string('type', 16).notNullable().defaultTo('team');
    t.jsonb('settings')
      .notNullable()
      .defaultTo(JSON.stringify({ session_record: true, connection_announcement: '' }));
    t.integer('max_devices').notNullable().defaultTo(-1);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('create unique index namespaces_name_key on namespaces (lower(name))');

  await knex.schema.createTable('namespace_members', (t) => {
    t.uuid('tenant_id').notNullable().references('namespaces.tenant_id').onDelete('CASCADE');
    t.string('user_id', 24).notNullable().references('users.id').onDelete('CASCADE');
    t.string('role', 16).notNullable();
    t.string('status', 16).notNullable().defaultTo('accepted');
    t.timestamp('added_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true });
    t.primary(['tenant_id', 'user_id']);
    t.index(['user_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('namespace_members');
  await knex.schema.dropTable('namespaces');
  await knex.schema.dropTable('users');
}
