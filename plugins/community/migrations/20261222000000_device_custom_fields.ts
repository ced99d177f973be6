import type { Knex } from 'knex';

/**
 * Custom fields of a device: the namespace's own key-value metadata (owner, location, asset number), a JSON object
 * of strings. At most 32 keys per device, each key 1 to 64 letters, digits, `_`, `-` or `.`, each value at most 256
 * characters: the service checks them before writing, and the constraint keeps the column an object whatever
 * writes it. Adding a column with a constant default rewrites no row, so this is quick on a large table.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table devices add column custom_fields jsonb not null default '{}'::jsonb`);
  await knex.raw(
    `alter table devices add constraint devices_custom_fields_object check (jsonb_typeof(custom_fields) = 'object')`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table devices drop constraint devices_custom_fields_object');
  await knex.raw('alter table devices drop column custom_fields');
}
