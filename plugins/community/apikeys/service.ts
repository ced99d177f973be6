import { createHash, randomUUID } from 'node:crypto';
import {
  type Caller,
  Conflict,
  Forbidden,
  fromDatabaseError,
  isRole,
  NotFound,
  paginate,
  type Role,
  roleAtLeast,
  TenantStore,
  Unauthorized,
} from '@gatehouse/core';
import type { Knex } from 'knex';
import type { Context } from 'koa';

export interface ApiKeyRow {
  key_digest: string;
  tenant_id: string;
  name: string;
  created_by: string;
  role: Role;
  expires_in: number | string;
  created_at: Date;
  updated_at: Date;
}

const conflicts = { api_keys_tenant_name_key: ['name'] };
const DAY = 86_400;

/** Keys are found by the SHA-256 of the key: equal digests, not a byte-by-byte compare of the secret. */
export function keyDigest(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** The API key entity of SPEC.md section 3 (never the key itself, which is returned once, at creation). */
export function keyView(row: ApiKeyRow) {
  return {
    name: row.name,
    tenant_id: row.tenant_id,
    created_by: row.created_by,
    role: row.role,
    expires_in: Number(row.expires_in),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** Resolves `X-API-Key` to its namespace and role; unknown, malformed or expired keys are 401. */
export async function resolveApiKey(db: Knex, key: string): Promise<Caller> {
  if (!/^[0-9a-f-]{36}$/i.test(key)) throw new Unauthorized();
  const row = await db<ApiKeyRow>('api_keys')
    .where({ key_digest: keyDigest(key.toLowerCase()) })
    .first();
  if (!row || !isRole(row.role)) throw new Unauthorized();
  const expires = Number(row.expires_in);
  if (expires !== -1 && expires <= Date.now() / 1000) throw new Unauthorized('the API key has expired');
  // A key speaks for the account that created it: once an administrator disables that account, the key stops.
  const creator = await db('users').where({ id: row.created_by }).first('status');
  if (creator?.status === 'disabled') throw new Unauthorized();
  return {
    kind: 'apiKey',
    keyId: row.key_digest,
    tenantId: row.tenant_id,
    role: row.role,
    createdBy: row.created_by,
  };
}

/**
 * API keys of the caller's namespace (request scope, through the tenant store). A key's role never exceeds its
 * creator's; keys are managed with user tokens only (SPEC.md section 6).
 */
export class ApiKeyService {
  private readonly store: TenantStore;
  private readonly caller: Caller;

  constructor(deps: { db: Knex; tenantId: string | undefined; caller: Caller }) {
    if (!deps.tenantId) throw new Forbidden('this call needs a namespace; switch to one first');
    this.store = new TenantStore(deps.db, deps.tenantId);
    this.caller = deps.caller;
  }

  private creator() {
    if (this.caller.kind !== 'user' || !this.caller.role)
      throw new Forbidden('API keys are managed with a user token');
    return { userId: this.caller.userId, role: this.caller.role };
  }

  async create(input: { name: string; expires_in: number; role?: Role }) {
    const me = this.creator();
    const role = input.role ?? me.role;
    if (!roleAtLeast(me.role, role)) throw new Forbidden('a key cannot have a role above yours');
    await this.nameFree(input.name);
    const key = randomUUID();
    const expires = input.expires_in === -1 ? -1 : Math.floor(Date.now() / 1000) + input.expires_in * DAY;
    try {
      const [row] = (await this.store
        .insert('api_keys', {
          key_digest: keyDigest(key),
          name: input.name,
          created_by: me.userId,
          role,
          expires_in: expires,
        })
        .returning('*')) as ApiKeyRow[];
      return { id: key, ...keyView(row as ApiKeyRow) };
    } catch (err) {
      throw fromDatabaseError(err, conflicts);
    }
  }

  async list(
    ctx: Context,
    query: { page: number; per_page: number; sort_by: string; order_by: 'asc' | 'desc' },
  ) {
    const rows = await paginate<ApiKeyRow>(ctx, this.store.table('api_keys').select('*'), query, {
      column: query.sort_by,
      direction: query.order_by,
    });
    return rows.map(keyView);
  }

  private async byName(name: string): Promise<ApiKeyRow> {
    const row = await this.store.table<ApiKeyRow>('api_keys').where({ name }).first();
    if (!row) throw new NotFound('API key');
    return row as ApiKeyRow;
  }

  private async nameFree(name: string) {
    const taken = await this.store.table('api_keys').whereRaw('lower(name) = lower(?)', [name]).first('name');
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
      await this.store
        .table('api_keys')
        .where({ key_digest: row.key_digest })
        .update({
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
    await this.store.table('api_keys').where({ key_digest: row.key_digest }).delete();
  }
}
