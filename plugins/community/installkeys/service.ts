import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import {
  type Caller,
  Conflict,
  Forbidden,
  fromDatabaseError,
  Invalid,
  listPage,
  NotFound,
  type Page,
  type TenantStore,
} from '@gatehouse/core';
import type { Knex } from 'knex';
import { InstallKey } from './model';
import type { InstallKeyView, InstallKeyWithKey } from './schemas';

const conflicts = { install_keys_tenant_name_key: ['name'] };

/**
 * The text of an install key: `gik_`, the lookup (12 hex digits, public: it finds the key's row and is shown in
 * the key list), `_`, and 40 hex digits of secret (160 random bits). Only hex digits and underscores, so it can be
 * pasted into a shell command, a unit file or a URL as it is.
 */
const KEY_TEXT = /^gik_([0-9a-f]{12})_[0-9a-f]{40}$/;

function newKeyText(): { key: string; lookup: string } {
  const lookup = randomBytes(6).toString('hex');
  return { key: `gik_${lookup}_${randomBytes(20).toString('hex')}`, lookup };
}

/** What is kept of a key: the SHA-256 of its text. The key is random, so a slow hash would add nothing. */
function digest(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

/** An install key as the API shows it: never the key itself, which is answered once (create, rotate). */
export function installKeyView(row: InstallKey): InstallKeyView {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    name: row.name,
    key_hint: `gik_${row.lookup}`,
    created_by: row.created_by,
    expires_at: row.expires_at ? new Date(row.expires_at).toISOString() : null,
    usage_limit: Number(row.usage_limit),
    used_times: Number(row.used_times),
    last_used_at: row.last_used_at ? new Date(row.last_used_at).toISOString() : null,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

/** Why a presented install key does not admit a device; each answers 403 with its own message. */
export type InstallKeyRefusal = 'invalid' | 'expired' | 'used-up';

export type InstallKeyCheck =
  | { ok: true; id: string }
  | { ok: false; reason: InstallKeyRefusal; detail?: string };

/** Whether a key of the right namespace admits one more device now: not expired, with uses left. */
function admits(row: InstallKey | undefined): InstallKeyCheck {
  if (!row) return { ok: false, reason: 'invalid' };
  if (row.expires_at && new Date(row.expires_at).getTime() <= Date.now()) {
    return { ok: false, reason: 'expired', detail: new Date(row.expires_at).toISOString() };
  }
  if (row.usage_limit > 0 && row.used_times >= row.usage_limit) {
    return { ok: false, reason: 'used-up', detail: String(row.usage_limit) };
  }
  return { ok: true, id: row.id };
}

/**
 * Checks the install keys agents present at registration (the devices feature asks; singleton). A key admits a
 * device of its own namespace only, while it exists, has not expired and has uses left.
 */
export class InstallKeys {
  private readonly db: Knex;

  constructor(deps: { db: Knex }) {
    this.db = deps.db;
  }

  /**
   * The key `presented` names, if it is a key of `tenantId` (its digest compared in constant time), or why not.
   * Malformed text, an unknown or revoked key and another namespace's key are all `invalid`: the answer tells a
   * caller without the key nothing about which keys exist.
   */
  async check(tenantId: string, presented: string): Promise<InstallKeyCheck> {
    const lookup = KEY_TEXT.exec(presented)?.[1];
    if (!lookup) return { ok: false, reason: 'invalid' };
    const row = await InstallKey.acrossTenants(this.db).findOne({ lookup });
    const matches = row ? timingSafeEqual(Buffer.from(row.key_digest, 'hex'), digest(presented)) : false;
    return admits(matches && row?.tenant_id === tenantId ? row : undefined);
  }

  /**
   * Counts one registration against key `id` in the registration's transaction (so a refused registration uses
   * nothing), or says why it no longer admits one: revoked, expired or used up since it was checked.
   */
  async use(trx: Knex.Transaction, id: string): Promise<InstallKeyCheck> {
    const row = (await InstallKey.acrossTenants(trx).findById(id).forUpdate()) as InstallKey | undefined;
    const check = admits(row);
    if (check.ok) {
      await trx('install_keys')
        .where({ id })
        .update({ used_times: trx.raw('used_times + 1'), last_used_at: trx.fn.now() });
    }
    return check;
  }
}

/**
 * The install keys of the caller's namespace (request scope, through the tenant store): create, list, rotate and
 * revoke. The key text is answered by create and rotate only.
 */
export class NamespaceInstallKeys {
  private readonly tenant: TenantStore;
  private readonly caller: Caller;

  constructor(deps: { tenant: TenantStore; caller: Caller }) {
    this.tenant = deps.tenant;
    this.caller = deps.caller;
  }

  private keys() {
    return this.tenant.query(InstallKey);
  }

  /** The account a key is recorded as made by: the user, or the account an API key speaks for. */
  private creator(): string {
    if (this.caller.kind === 'user') return this.caller.userId;
    if (this.caller.kind === 'apiKey') return this.caller.createdBy;
    throw new Forbidden('install keys are managed by members of the namespace');
  }

  async create(input: {
    name: string;
    expires_at?: string | null;
    usage_limit?: number;
  }): Promise<InstallKeyWithKey> {
    const createdBy = this.creator();
    const expires = input.expires_at ? new Date(input.expires_at) : null;
    if (expires && !(expires.getTime() > Date.now())) throw new Invalid(['expires_at'], 'expires_at is past');
    if (await this.keys().whereRaw('lower(name) = lower(?)', [input.name]).first().select('id')) {
      throw new Conflict(['name']);
    }
    const { key, lookup } = newKeyText();
    try {
      const row = await this.keys()
        .insert({
          id: randomUUID(),
          name: input.name,
          lookup,
          key_digest: digest(key).toString('hex'),
          created_by: createdBy,
          expires_at: expires,
          usage_limit: input.usage_limit ?? 0,
        })
        .returning('*');
      return { ...installKeyView(row), key };
    } catch (err) {
      throw fromDatabaseError(err, conflicts);
    }
  }

  async list(query: {
    page: number;
    per_page: number;
    sort_by: string;
    order_by: 'asc' | 'desc';
  }): Promise<Page<InstallKeyView>> {
    const page = await listPage<InstallKey>(this.keys(), query, {
      column: query.sort_by,
      direction: query.order_by,
    });
    return { items: page.items.map(installKeyView), total: page.total };
  }

  /**
   * A new key text for the key `id`, which keeps its name, expiry, limit and count: the old text stops admitting
   * devices at once. Devices it admitted stay admitted.
   */
  async rotate(id: string): Promise<InstallKeyWithKey> {
    this.creator();
    const { key, lookup } = newKeyText();
    const [row] = await this.keys()
      .where({ id })
      .patch({ lookup, key_digest: digest(key).toString('hex'), updated_at: new Date() })
      .returning('*');
    if (!row) throw new NotFound('install key');
    return { ...installKeyView(row), key };
  }

  /** Revokes the key `id`: it admits no more devices; the devices it admitted stay. */
  async revoke(id: string): Promise<void> {
    this.creator();
    const removed = await this.keys().deleteById(id);
    if (!removed) throw new NotFound('install key');
  }
}
