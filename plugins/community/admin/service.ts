import {
  type Caller,
  type Config,
  Forbidden,
  hashPassword,
  type Instance,
  type Logger,
  NotFound,
  type Role,
} from '@gatehouse/core';
import type { Knex } from 'knex';
import { Device } from '../devices/model';
import { Member } from '../members/model';
import { Namespace } from '../namespaces/model';
import type { NamespaceRow, NamespaceService } from '../namespaces/service';
import { User } from '../users/model';
import type { UserRow, UserService } from '../users/service';
import type { AdminNamespaceView, AdminUserView, Health } from './schemas';

export function adminUserView(
  u: UserRow & { namespaces?: number | string; last_login?: Date | null },
): AdminUserView {
  return {
    id: u.id,
    name: u.name,
    username: u.username,
    email: u.email,
    admin: Boolean(u.admin),
    disabled: u.status === 'disabled',
    mfa: Boolean(u.mfa_enabled),
    namespaces: Number(u.namespaces ?? 0),
    created_at: new Date(u.created_at).toISOString(),
    last_login: u.last_login ? new Date(u.last_login).toISOString() : null,
  };
}

export interface AdminNamespaceRow extends NamespaceRow {
  owner_username: string | null;
  members: number | string;
  devices: number | string;
}

export function adminNamespaceView(n: AdminNamespaceRow): AdminNamespaceView {
  return {
    tenant_id: n.tenant_id,
    name: n.name,
    owner: n.owner,
    owner_username: n.owner_username ?? '',
    members: Number(n.members),
    device_count: Number(n.devices),
    max_devices: n.max_devices,
    created_at: new Date(n.created_at).toISOString(),
  };
}

const started = Date.now();

/**
 * Instance administration: users, namespaces and server health across the whole instance, for instance
 * administrators and the operator's CLI. Every change is logged with who made it.
 */
export class AdminService {
  private readonly db: Knex;
  private readonly users: UserService;
  private readonly namespaces: NamespaceService;
  private readonly log: Logger;
  private readonly config: Config;
  private readonly instance: Instance;

  constructor(deps: {
    db: Knex;
    users: UserService;
    namespaces: NamespaceService;
    log: Logger;
    config: Config;
    instance: Instance;
  }) {
    this.db = deps.db;
    this.users = deps.users;
    this.namespaces = deps.namespaces;
    this.log = deps.log.child({ part: 'admin' });
    this.config = deps.config;
    this.instance = deps.instance;
  }

  /** Who made an administration call, for the log. */
  static actor(caller: Caller): string {
    if (caller.kind === 'user') return `user:${caller.username}`;
    return caller.kind === 'local' ? 'local-socket' : caller.kind;
  }

  audit(caller: Caller, action: string, target: Record<string, unknown>): void {
    this.log.info({ actor: AdminService.actor(caller), action, ...target }, 'instance administration');
  }

  /** Instance administration spans every account and namespace by design. */
  private accounts(trx?: Knex.Transaction) {
    return User.bindKnex(this.db).query(trx).alias('u');
  }

  private usersQuery(trx?: Knex.Transaction) {
    return this.accounts(trx).select(
      'u.*',
      Member.acrossTenants(this.db).whereRaw('namespace_members.user_id = u.id').count('*').as('namespaces'),
    );
  }

  async listUsers(query: { page: number; per_page: number; search?: string | undefined }) {
    const q = this.accounts();
    if (query.search) {
      const like = `%${query.search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      q.where(
        (b) =>
          void b.whereRaw('lower(u.username) like ?', [like]).orWhereRaw('lower(u.email) like ?', [like]),
      );
    }
    const count = await q.clone().resultSize();
    const rows = await this.usersQuery()
      .whereIn('u.id', q.clone().select('u.id'))
      .orderBy('u.created_at', 'asc')
      .orderBy('u.id', 'asc')
      .limit(query.per_page)
      .offset((query.page - 1) * query.per_page);
    return { total: count, items: (rows as unknown as UserRow[]).map(adminUserView) };
  }

  /** A user by id, username or e-mail. */
  async findUser(ref: string): Promise<UserRow> {
    const user = /^[0-9a-f]{24}$/.test(ref)
      ? await this.accounts().findById(ref)
      : await this.users.findByLogin(ref);
    if (!user) throw new NotFound('user');
    return user;
  }

  async userView(id: string) {
    const row = await this.usersQuery().where('u.id', id).first();
    if (!row) throw new NotFound('user');
    return adminUserView(row as unknown as UserRow);
  }

  async createUser(
    caller: Caller,
    input: { name?: string; username: string; email: string; password: string; admin?: boolean },
  ) {
    const created = await this.users.create({
      ...input,
      name: input.name ?? input.username.slice(0, 20),
      admin: input.admin ?? false,
    });
    this.audit(caller, 'user.create', { user: created.username, admin: created.admin });
    return this.userView(created.id);
  }

  async setPassword(caller: Caller, ref: string, password: string) {
    const user = await this.findUser(ref);
    await this.users.setPassword(user.id, await hashPassword(password));
    this.audit(caller, 'user.password', { user: user.username });
    return this.userView(user.id);
  }

  /** Grants or revokes the administrator flag, disables or enables the account. */
  async updateUser(caller: Caller, ref: string, changes: { admin?: boolean; disabled?: boolean }) {
    const user = await this.findUser(ref);
    const self = caller.kind === 'user' && caller.userId === user.id;
    if (self && (changes.admin === false || changes.disabled === true)) {
      throw new Forbidden('you cannot revoke or disable your own administrator account');
    }
    const losesAdmin =
      user.admin && user.status !== 'disabled' && (changes.admin === false || changes.disabled === true);
    return this.db.transaction(async (trx) => {
      if (losesAdmin) {
        // Lock the administrators while counting, so two concurrent calls cannot remove the last two.
        const others = await this.accounts(trx)
          .where({ admin: true })
          .whereNot({ status: 'disabled' })
          .whereNot({ id: user.id })
          .forUpdate()
          .select('id');
        if (!others.length)
          throw new Forbidden('the last instance administrator cannot be revoked or disabled');
      }
      const row: Record<string, unknown> = { updated_at: new Date() };
      if (changes.admin !== undefined) row.admin = changes.admin;
      if (changes.disabled !== undefined) row.status = changes.disabled ? 'disabled' : 'confirmed';
      await this.accounts(trx).findById(user.id).patch(row);
      this.audit(caller, 'user.update', { user: user.username, ...changes });
      const updated = await this.usersQuery(trx).where('u.id', user.id).first();
      return adminUserView(updated as unknown as UserRow);
    });
  }

  private namespacesQuery() {
    // Every namespace, with counts of its members and devices: across tenants by design.
    return Namespace.bindKnex(this.db)
      .query()
      .alias('n')
      .leftJoinRelated('ownerUser', { alias: 'o' })
      .select(
        'n.*',
        'o.username as owner_username',
        Member.acrossTenants(this.db)
          .whereRaw('namespace_members.tenant_id = n.tenant_id')
          .count('*')
          .as('members'),
        Device.acrossTenants(this.db)
          .whereRaw('devices.tenant_id = n.tenant_id')
          .where('devices.status', 'accepted')
          .count('*')
          .as('devices'),
      );
  }

  async listNamespaces(query: { page: number; per_page: number; search?: string | undefined }) {
    const q = Namespace.bindKnex(this.db).query().alias('n');
    if (query.search) {
      const like = `%${query.search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      q.whereRaw('lower(n.name) like ?', [like]);
    }
    const count = await q.clone().resultSize();
    const rows = await this.namespacesQuery()
      .whereIn('n.tenant_id', q.clone().select('n.tenant_id'))
      .orderBy('n.created_at', 'asc')
      .orderBy('n.name', 'asc')
      .limit(query.per_page)
      .offset((query.page - 1) * query.per_page);
    return { total: count, items: (rows as unknown as AdminNamespaceRow[]).map(adminNamespaceView) };
  }

  /** A namespace by tenant id or name. */
  async findNamespace(ref: string): Promise<NamespaceRow> {
    const found = /^[0-9a-f-]{36}$/i.test(ref)
      ? await this.namespaces.byTenant(ref)
      : await this.namespaces.byName(ref);
    if (!found) throw new NotFound('namespace');
    return found;
  }

  async namespaceView(tenantId: string) {
    const row = await this.namespacesQuery().where('n.tenant_id', tenantId).first();
    if (!row) throw new NotFound('namespace');
    return adminNamespaceView(row as unknown as AdminNamespaceRow);
  }

  async createNamespace(caller: Caller, name: string, ownerRef: string) {
    const owner = await this.findUser(ownerRef);
    const ns = await this.db.transaction((trx) => this.namespaces.create(name, owner.id, trx));
    this.audit(caller, 'namespace.create', { namespace: ns.name, owner: owner.username });
    return this.namespaceView(ns.tenant_id);
  }

  async setMaxDevices(caller: Caller, ref: string, max: number) {
    const ns = await this.findNamespace(ref);
    await this.namespaces.setMaxDevices(ns.tenant_id, max);
    this.audit(caller, 'namespace.max_devices', { namespace: ns.name, max_devices: max });
    return this.namespaceView(ns.tenant_id);
  }

  async addMember(caller: Caller, ref: string, userRef: string, role: Exclude<Role, 'owner'>) {
    const ns = await this.findNamespace(ref);
    const user = await this.findUser(userRef);
    await this.namespaces.addMember(ns.tenant_id, user.id, role);
    this.audit(caller, 'namespace.member_add', { namespace: ns.name, user: user.username, role });
    return this.namespaceView(ns.tenant_id);
  }

  /** The server's state: version, uptime, store and cache, counts. */
  async health(): Promise<Health> {
    const t0 = performance.now();
    let storeOk = true;
    try {
      await this.db.raw('select 1');
    } catch {
      storeOk = false;
    }
    const storeMs = Math.round((performance.now() - t0) * 10) / 10;
    const count = async (table: string, where: Record<string, unknown> = {}) => {
      if (!storeOk) return 0;
      const [{ count: n } = { count: 0 }] = (await this.db(table).where(where).count({ count: '*' })) as {
        count: number;
      }[];
      return Number(n);
    };
    const memory = process.memoryUsage();
    return {
      version: this.instance.version,
      edition: this.config.edition,
      uptime_seconds: Math.round((Date.now() - started) / 1000),
      store: {
        kind: this.config.database.url ? 'postgresql' : 'embedded',
        ok: storeOk,
        ms: storeMs,
      },
      cache: { kind: this.config.redis.url ? 'redis' : 'in-process' },
      users: await count('users'),
      disabled_users: await count('users', { status: 'disabled' }),
      namespaces: await count('namespaces'),
      devices: {
        accepted: await count('devices', { status: 'accepted' }),
        pending: await count('devices', { status: 'pending' }),
      },
      memory: { rss_bytes: memory.rss, heap_used_bytes: memory.heapUsed },
      listeners: { http: this.instance.httpPort, ssh: this.instance.sshPort },
    };
  }
}
