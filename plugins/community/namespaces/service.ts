import { createHmac, randomUUID } from 'node:crypto';
import {
  type Caller,
  type Config,
  Conflict,
  Forbidden,
  fromDatabaseError,
  type Hooks,
  type InstanceKeys,
  type NamespaceBilling,
  NotFound,
  type Role,
  roleAtLeast,
  TenantStore,
} from '@gatehouse/core';
import type { Knex } from 'knex';
import { Member } from '../members/model';
import { User } from '../users/model';
import { Namespace, type NamespaceSettings } from './model';
import type { MemberView, NamespaceView } from './schemas';

const iso = (d: Date | string) => new Date(d).toISOString();

/** A member's row as the Namespace entity's view reads it, with its account. */
interface MemberRow {
  id: string;
  username: string;
  email: string;
  role: Role;
  status: 'accepted' | 'pending';
  added_at: Date;
  expires_at: Date | null;
}

export interface NamespaceRow {
  tenant_id: string;
  name: string;
  owner: string;
  type: string;
  settings: NamespaceSettings;
  max_devices: number;
  created_at: Date;
}

export const namespaceConflicts = { namespaces_name_key: ['name'] };

/** Namespaces (tenants) and their memberships. */
export class NamespaceService {
  private readonly db: Knex;
  private readonly config: Config;
  private readonly hooks: Hooks;
  private readonly keys: InstanceKeys;
  private devicesTable: Promise<boolean> | undefined;

  constructor(deps: { db: Knex; config: Config; hooks: Hooks; keys: InstanceKeys }) {
    this.db = deps.db;
    this.config = deps.config;
    this.hooks = deps.hooks;
    this.keys = deps.keys;
  }

  /**
   * The caller's role in `tenantId`, read fresh: a user's membership, or an API key's own namespace. Anything else
   * is 404, so a namespace one does not belong to cannot be told apart from one that does not exist; a role below
   * `need` is 403.
   */
  /**
   * The store of `tenantId` for a caller whose role there is at least `need` (`roleIn`'s answers otherwise). Calls
   * that name a namespace in their path (`/api/namespaces/{tenant}/...`) act on that namespace, not the caller's
   * token namespace: this hands out its store only once the caller's membership is established.
   */
  async storeFor(
    caller: Caller,
    tenantId: string,
    need: Role = 'observer',
  ): Promise<{ role: Role; tenant: TenantStore }> {
    const role = await this.roleIn(caller, tenantId, need);
    return { role, tenant: new TenantStore(this.db, tenantId) };
  }

  private rows(trx?: Knex) {
    return Namespace.bindKnex(this.db).query(trx === this.db ? undefined : trx);
  }

  async roleIn(caller: Caller, tenantId: string, need: Role = 'observer'): Promise<Role> {
    let role: Role | undefined;
    if (caller.kind === 'user') role = await this.memberRole(tenantId, caller.userId);
    else if (caller.kind === 'apiKey' && caller.tenantId === tenantId) role = caller.role;
    if (!role) throw new NotFound('namespace');
    if (!roleAtLeast(role, need)) throw new Forbidden(`this call needs the ${need} role or higher`);
    return role;
  }

  memberRole(tenantId: string, userId: string): Promise<Role | undefined> {
    return Member.acceptedRole(this.db, tenantId, userId);
  }

  /** Namespaces a user belongs to (or the one of an API key), newest first, with the total for X-Total-Count. */
  async list(caller: Caller, page: { page: number; per_page: number }) {
    const q = this.rows();
    if (caller.kind === 'user') {
      // A user's own namespaces: their memberships, across tenants by design.
      q.whereIn(
        'tenant_id',
        Member.acrossTenants(this.db)
          .where({ user_id: caller.userId, status: 'accepted' })
          .select('tenant_id'),
      );
    } else if (caller.kind === 'apiKey') {
      q.where({ tenant_id: caller.tenantId });
    } else {
      throw new Forbidden();
    }
    const total = await q.clone().resultSize();
    const rows: NamespaceRow[] = await q
      .orderBy('created_at', 'desc')
      .limit(page.per_page)
      .offset((page.page - 1) * page.per_page);
    return { total, items: await Promise.all(rows.map((r) => this.view(r))) };
  }

  /** The Namespace entity as the API answers it. */
  async view(ns: NamespaceRow): Promise<NamespaceView> {
    // The namespace's own members, each with its account through the member's `user` relation.
    const rows = await new TenantStore(this.db, ns.tenant_id)
      .query(Member)
      .joinRelated('user')
      .orderBy('namespace_members.added_at', 'asc')
      .select(
        'user.id',
        'user.username',
        'user.email',
        'namespace_members.role',
        'namespace_members.status',
        'namespace_members.added_at',
        'namespace_members.expires_at',
      )
      .castTo<MemberRow[]>();
    const members = rows.map(
      (m): MemberView => ({
        id: m.id,
        username: m.username,
        email: m.email,
        role: m.role,
        status: m.status,
        added_at: iso(m.added_at),
        type: m.id === ns.owner ? 'personal' : 'team',
        ...(m.expires_at ? { expires_at: iso(m.expires_at) } : {}),
      }),
    );
    const billed = { tenantId: ns.tenant_id, billing: null as NamespaceBilling | null };
    await this.hooks.run('namespace.view', billed);
    return {
      name: ns.name,
      owner: ns.owner,
      tenant_id: ns.tenant_id,
      members,
      settings: {
        session_record: ns.settings.session_record,
        connection_announcement: ns.settings.connection_announcement ?? '',
        require_install_key: ns.settings.require_install_key === true,
        recording_retention_days: ns.settings.recording_retention_days ?? 0,
        session_share_links: ns.settings.session_share_links === true,
      },
      max_devices: ns.max_devices,
      device_count: await this.deviceCount(ns.tenant_id),
      created_at: iso(ns.created_at),
      billing: billed.billing,
    };
  }

  async get(tenantId: string): Promise<NamespaceRow> {
    const ns = await this.byTenant(tenantId);
    if (!ns) throw new NotFound('namespace');
    return ns;
  }

  /**
   * Accepted devices (of both kinds) count against the limit: the devices feature's kept counts, one row per kind
   * rather than a count of the namespace's devices. That feature owns the table and may not be loaded yet.
   */
  private async deviceCount(tenantId: string): Promise<number> {
    this.devicesTable ??= this.db.schema.hasTable('device_counts');
    if (!(await this.devicesTable)) return 0;
    const [{ count } = { count: 0 }] = (await this.db('device_counts')
      .where({ tenant_id: tenantId })
      .sum({ count: 'accepted' })) as { count: number | string | null }[];
    return Number(count ?? 0);
  }

  /**
   * Renames and changes settings (session_record, connection_announcement up to 4096 characters,
   * require_install_key, recording_retention_days, session_share_links).
   */
  async update(
    tenantId: string,
    changes: { name?: string; settings?: Partial<NamespaceSettings> },
  ): Promise<NamespaceRow> {
    const ns = await this.get(tenantId);
    const row: Record<string, unknown> = {};
    if (changes.name !== undefined && changes.name.toLowerCase() !== ns.name) {
      const taken = await this.rows()
        .whereRaw('lower(name) = lower(?)', [changes.name])
        .whereNot({ tenant_id: tenantId })
        .select('tenant_id')
        .first();
      if (taken) throw new Conflict(['name']);
      row.name = changes.name.toLowerCase();
    }
    // Merged in the store (jsonb ||), not from the row read above: two saves of different settings at once both
    // stay.
    if (changes.settings)
      row.settings = this.db.raw('settings || ?::jsonb', [JSON.stringify(changes.settings)]);
    if (!Object.keys(row).length) return ns;
    try {
      const [updated] = await this.rows().where({ tenant_id: tenantId }).patch(row).returning('*');
      return updated as NamespaceRow;
    } catch (err) {
      throw fromDatabaseError(err, namespaceConflicts);
    }
  }

  /** Deletes a namespace with everything in it: tenant tables reference it with ON DELETE CASCADE. */
  async remove(tenantId: string): Promise<void> {
    await this.db.transaction(async (trx) => {
      const ns = await this.rows(trx).findById(tenantId).select('tenant_id').forUpdate();
      if (!ns) throw new NotFound('namespace');
      await this.hooks.run('namespace.beforeDelete', { tenantId, trx });
      await this.rows(trx).deleteById(tenantId);
    });
  }

  /** The support identifier: 64 hex, stable per namespace, not guessable from the tenant id. */
  supportIdentifier(tenantId: string): string {
    return createHmac('sha256', this.keys.secret).update(`support:${tenantId}`).digest('hex');
  }

  /** Creates a namespace owned by `ownerId`, within the owner's `max_namespaces` (0 none, -1 unlimited). */
  async create(name: string, ownerId: string, trx: Knex = this.db): Promise<NamespaceRow> {
    const owner = await User.bindKnex(this.db)
      .query(trx === this.db ? undefined : trx)
      .findById(ownerId)
      .select('max_namespaces');
    if (!owner) throw new Forbidden('unknown owner');
    if (owner.max_namespaces >= 0) {
      const count = await this.rows(trx).where({ owner: ownerId }).resultSize();
      if (count >= owner.max_namespaces) throw new Forbidden('this user may not own more namespaces');
    }
    if (await this.rows(trx).whereRaw('lower(name) = lower(?)', [name]).select('tenant_id').first()) {
      throw new Conflict(['name']);
    }
    const maxDevices = this.config.limits.maxDevices;
    try {
      const ns = await this.rows(trx)
        .insert({
          tenant_id: randomUUID(),
          name: name.toLowerCase(),
          owner: ownerId,
          max_devices: maxDevices,
        })
        .returning('*');
      await this.addMember(ns.tenant_id, ownerId, 'owner', trx);
      return ns as NamespaceRow;
    } catch (err) {
      throw fromDatabaseError(err, namespaceConflicts);
    }
  }

  async addMember(tenantId: string, userId: string, role: Role, trx: Knex = this.db): Promise<void> {
    try {
      await new TenantStore(this.db, tenantId, trx === this.db ? undefined : (trx as Knex.Transaction))
        .query(Member)
        .insert({ user_id: userId, role, status: 'accepted' });
    } catch (err) {
      throw fromDatabaseError(err, { namespace_members_pkey: ['email'] });
    }
  }

  async byName(name: string): Promise<NamespaceRow | undefined> {
    return await this.rows().whereRaw('lower(name) = lower(?)', [name]).first();
  }

  async byTenant(tenantId: string): Promise<NamespaceRow | undefined> {
    return await this.rows().findById(tenantId);
  }

  /** Sets the device limit (admin CLI): at least 3, or -1 for unlimited. */
  async setMaxDevices(tenantId: string, max: number): Promise<void> {
    await this.rows().findById(tenantId).patch({ max_devices: max });
  }
}
