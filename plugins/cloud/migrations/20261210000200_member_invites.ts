import type { Knex } from 'knex';

/**
 * E-mailed namespace invitations: valid 7 days, one per namespace and address. `id`
 * is the member id the accept-invite link names: the invitee's user id, or a new one for an address without an
 * account yet. Only a digest of the link's signature is kept.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('member_invites', (t) => {
    t.string('id', 24).notNullable();
    t.uuid('tenant_id').notNullable().references('namespaces.tenant_id').onDelete('CASCADE');
    t.string('email', 255).notNullable();
    t.string('role', 16).notNullable();
    t.string('invited_by', 24).references('users.id').onDelete('SET NULL');
    t.string('digest', 64).notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('accepted_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['tenant_id', 'id']);
    t.unique(['digest']);
  });
  await knex.raw('create unique index member_invites_email_key on member_invites (tenant_id, lower(email))');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('member_invites');
}
