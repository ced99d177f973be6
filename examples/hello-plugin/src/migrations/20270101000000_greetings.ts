import type { Knex } from 'knex';

/** The plugin's one table: greetings posted in a namespace, by a person or by the plugin's hook. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('hello_greetings', (t) => {
    t.increments('id');
    // A namespace's rows go with it.
    t.uuid('tenant_id').notNullable().references('tenant_id').inTable('namespaces').onDelete('CASCADE');
    t.string('text', 140).notNullable();
    // Who posted it: a username, or `hello` for the greetings the plugin posts itself.
    t.string('author', 64).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['tenant_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('hello_greetings');
}
