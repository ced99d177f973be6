import type { Knex } from 'knex';

/**
 * Where an account comes from: `local` (made with a password: setup, sign-up, the CLI, an administrator) or `saml`
 * (made at its first single sign-on; its password is random and managed by the identity provider). Accounts made by
 * SAML before this column existed cannot be told apart from local ones (nothing recorded how an account was made),
 * so they stay `local`; their password still cannot be changed without the random one nobody knows.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.string('origin', 16).notNullable().defaultTo('local');
  });
  await knex.raw("alter table users add constraint users_origin_check check (origin in ('local', 'saml'))");
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table users drop constraint users_origin_check');
  await knex.schema.alterTable('users', (t) => t.dropColumn('origin'));
}
