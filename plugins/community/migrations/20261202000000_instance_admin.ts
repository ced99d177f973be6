import type { Knex } from 'knex';

/**
 * Instance administrators: a flag on the user. The user who ran first-run setup is the instance's
 * administrator, so an existing installation gets its setup user (named in system_state) flagged.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.boolean('admin').notNullable().defaultTo(false);
  });
  const setup = await knex('system_state').where({ key: 'setup' }).first('value');
  const value = typeof setup?.value === 'string' ? JSON.parse(setup.value) : setup?.value;
  if (value?.username) {
    await knex('users').whereRaw('lower(username) = lower(?)', [value.username]).update({ admin: true });
  }
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.dropColumn('admin');
  });
}
