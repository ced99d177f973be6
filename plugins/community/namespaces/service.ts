import { randomUUID } from 'node:crypto';
import { type Config, Conflict, Forbidden, fromDatabaseError, type Role } from '@gatehouse/core';
import type { Knex } from 'knex';

export interface NamespaceRow {
  tenant_id: string;
  name: string;
  owner: string;
  type: string;
  settings: { session_record: boolean; connection_announcement: string };
  max_devices: number;
  created_at: Date;
}

const conflicts = { namespaces_name_key: ['name'] };

/** Namespaces (tenants) and their memberships. */
export class NamespaceService {
  private readonly db: Knex;
  private readonly config: Config;

  constructor(deps: { db: Knex; config: Config }) {
    this.db = deps.db;
    this.config = deps.config;
  }

  /** Creates a namespace owned by `ownerId`, within the owner's `max_namespaces` (0 none, -1 unlimited). */
  async create(name: string, ownerId: string, trx: Knex = this.db): Promise<NamespaceRow> {
    const owner = await trx('users').where({ id: ownerId }).first('max_namespaces');
    if (!owner) throw new Forbidden('unknown owner');
    if (owner.max_namespaces >= 0) {
      const [{ count }] = (await trx('namespaces').where({ owner: ownerId }).count({ count: '*' })) as [
        { count: number },
      ];
      if (count >= owner.max_namespaces) throw new Forbidden('this user may not own more namespaces');
    }
    if (await trx('namespaces').whereRaw('lower(name) = lower(?)', [name]).first('tenant_id')) {
      throw new Conflict(['name']);
    }
    const maxDevices = this.config.limits.maxDevices;
    try {
      const [ns] = await trx('namespaces')
        .insert({
          tenant_id: randomUUID(),
          name: name.toLowerCase(),
          owner: ownerId,
          max_devices: maxDevices,
        })
        .returning('*');
      await this.addMember((ns as NamespaceRow).tenant_id, ownerId, 'owner', trx);
      return ns as NamespaceRow;
    } catch (err) {
      throw fromDatabaseError(err, conflicts);
    }
  }

  async addMember(tenantId: string, userId: string, role: Role, trx: Knex = this.db): Promise<void> {
    try {
      await trx('namespace_members').insert({
        tenant_id: tenantId,
        user_id: userId,
        role,
        status: 'accepted',
      });
    } catch (err) {
      throw fromDatabaseError(err, { namespace_members_pkey: ['email'] });
    }
  }

  byName(name: string): Promise<NamespaceRow | undefined> {
    return this.db<NamespaceRow>('namespaces').whereRaw('lower(name) = lower(?)', [name]).first();
  }

  byTenant(tenantId: string): Promise<NamespaceRow | undefined> {
    return this.db<NamespaceRow>('namespaces').where({ tenant_id: tenantId }).first();
  }

  /** Sets the device limit (admin CLI). SPEC.md: at least 3, or -1 for unlimited. */
  async setMaxDevices(tenantId: string, max: number): Promise<void> {
    await this.db('namespaces').where({ tenant_id: tenantId }).update({ max_devices: max });
  }
}
