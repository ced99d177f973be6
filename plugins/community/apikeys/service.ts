import { createHash, randomUUID } from 'node:crypto';
import {
  type Caller,
  Conflict,
  Forbidden,
  fromDatabaseError,
  isRole,
  listPage,
  NotFound,
  type Page,
  type Role,
  roleAtLeast,
  type TenantStore,
  Unauthorized,
} from '@gatehouse/core';
import type { Knex } from 'knex';
import { ref } from 'objection';
import { Member } from '../members/model';
import { User } from '../users/model';
import { ApiKey } from './model';
import type { ApiKeyView, CreatedApiKey } from './schemas';

const conflicts = { api_keys_tenant_name_key: ['name'] };
const DAY = 86_400;

/** Keys are found by the SHA-256 of the key: equal digests, not a byte-by-byte compare of the secret. */
export function keyDigest(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

const iso = (d: Date | string) => new Date(d).toISOString();

/** The API key entity as the API answers it (never the key itself, which is answered once, at creation). */
export function keyView(row: ApiKey): ApiKeyView {
  return {
    name: row.name,
    tenant_id: row.tenant_id,
    created_by: row.created_by,
    role: row.role,
    expires_in: Number(row.expires_in),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

/** Resolves `X-API-Key` to its namespace and role; unknown, malformed or expired keys are 401. */
export async function resolveApiKey(db: Knex, key: string): Promise<Caller> {
  if (!/^[0-9a-f-]{36}$/i.test(key)) throw new Unauthorized();
  // The key names its namespace: its digest is unique across the installation.
  const row = await ApiKey.acrossTenants(db).findById(keyDigest(key.toLowerCase()));
  if (!row || !isRole(row.role)) throw new Unauthorized();
  const expires = Number(row.expires_in);
  if (expires !== -1 && expires <= Date.now() / 1000) throw new Unauthorized('the API key has expired');
  // A key goes no further than the member who created it can go now, read in the same statement as the account:
  // a disabled or deleted account, or a creator removed from the namespace (or who left it), stops the key, since
  // they still hold its secret; a creator whose role was lowered lowers the key's with it.
  const creator = (await User.bindKnex(db)
    .query()
    .findById(row.created_by)
    .select('status', Member.acceptedRoleOf(db, row.tenant_id, ref('users.id')).as('role'))) as
    | { status: string; role: string | null }
    | undefined;
  if (!creator || creator.status === 'disabled') throw new Unauthorized();
  if (!isRole(creator.role))
    throw new Unauthorized('the API key stopped working: its creator is no longer a member of the namespace');
  return {
    kind: 'apiKey',
    keyId: row.key_digest,
    tenantId: row.tenant_id,
    role: roleAtLeast(creator.role, row.role) ? row.role : creator.role,
    createdBy: row.created_by,
  };
}

/**
 * API keys of the caller's namespace (request scope, through the tenant store). A key's role never exceeds its
 * creator's; keys are managed with user tokens only.
 */
export class ApiKeyService {
  private readonly tenant: TenantStore;
  private readonly caller: Caller;

  constructor(deps: { tenant: TenantStore; caller: Caller }) {
    this.tenant = deps.tenant;
    this.caller = deps.caller;
  }

  private keys() {
    return this.tenant.query(ApiKey);
  }

  private creator() {
    if (this.caller.kind !== 'user' || !this.caller.role)
      throw new Forbidden('API keys are managed with a user token');
    return { userId: this.caller.userId, role: this.caller.role };
  }

  async create(input: { name: string; expires_in: number; role?: Role }): Promise<CreatedApiKey> {
    const me = this.creator();
    const role = input.role ?? me.role;
    if (!roleAtLeast(me.role, role)) throw new Forbidden('a key cannot have a role above yours');
    await this.nameFree(input.name);
    const key = randomUUID();
    const expires = input.expires_in === -1 ? -1 : Math.floor(Date.now() / 1000) + input.expires_in * DAY;
    try {
      const row = await this.keys()
        .insert({
          key_digest: keyDigest(key),
          name: input.name,
          created_by: me.userId,
          role,
          expires_in: expires,
        })
        .returning('*');
      return { id: key, ...keyView(row) };
    } catch (err) {
      throw fromDatabaseError(err, conflicts);
    }
  }

  async list(query: {
    page: number;
    per_page: number;
    sort_by: string;
    order_by: 'asc' | 'desc';
  }): Promise<Page<ApiKeyView>> {
    const page = await listPage<ApiKey>(this.keys(), query, {
      column: query.sort_by,
      direction: query.order_by,
    });
    return { items: page.items.map(keyView), total: page.total };
  }

  private async byName(name: string): Promise<ApiKey> {
    const row = await this.keys().findOne({ name });
    if (!row) throw new NotFound('API key');
    return row;
  }

  private async nameFree(name: string) {
    const taken = await this.keys().whereRaw('lower(name) = lower(?)', [name]).first().select('name');
    if (taken) throw new Conflict(['name']);
  }

  async update(name: string, changes: { name?: string; role?: Role }) {
    const me = this.creator();
    const row = await this.byName(name);
    if (!roleAtLeast(me.role, row.role)) throw new Forbidden('this key has a role above yours');
    if (changes.role && !roleAtLeast(me.role, changes.role))
      throw new Forbidden('a key cannot have a role above yours');
    if (changes.name && changes.name.toLowerCase() !== row.name.toLowerCase())
      await this.nameFree(changes.name);
    try {
      await this.keys()
        .findById(row.key_digest)
        .patch({
          ...(changes.name !== undefined ? { name: changes.name } : {}),
          ...(changes.role !== undefined ? { role: changes.role } : {}),
          updated_at: new Date(),
        });
    } catch (err) {
      throw fromDatabaseError(err, conflicts);
    }
  }

  async remove(name: string) {
    const me = this.creator();
    const row = await this.byName(name);
    if (!roleAtLeast(me.role, row.role)) throw new Forbidden('this key has a role above yours');
    await this.keys().deleteById(row.key_digest);
  }
}
