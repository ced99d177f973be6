import type { Knex } from 'knex';

/**
 * SAML single sign-on as instance administrators set it up in the console (one row). The SP's private key is sealed
 * with the operator's key (core/secrets.ts); everything else is plain JSON.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('saml_settings', (t) => {
    t.smallint('id').primary();
    t.boolean('enabled').notNullable().defaultTo(false);
    t.jsonb('settings').notNullable().defaultTo('{}');
    t.text('sp_private_key');
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.string('updated_by', 24);
  });
  await knex.raw('alter table saml_settings add constraint saml_settings_one_row check (id = 1)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('saml_settings');
}
