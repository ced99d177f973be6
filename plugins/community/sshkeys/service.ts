import {
  Conflict,
  fromDatabaseError,
  Invalid,
  NotAcceptable,
  NotFound,
  TenantStore,
  Unprocessable,
} from '@gatehouse/core';
import type { Knex } from 'knex';
import {
  type DeviceFacts,
  type DeviceFilter,
  type FilterColumns,
  filterColumns,
  filterMatches,
  filterOf,
} from '../gateway/device-filter';
import { isValidPattern, PatternCache } from '../gateway/pattern';
import { TagFilterTable } from '../tags/filter-tables';
import { parsePublicKeyData } from './fingerprint';

interface PublicKeyRow extends FilterColumns {
  tenant_id: string;
  fingerprint: string;
  data: string;
  name: string;
  username: string;
  created_at: Date;
}

export interface PublicKey {
  data: string;
  fingerprint: string;
  name: string;
  username: string;
  filter: DeviceFilter;
  tenant_id: string;
  created_at: string;
}

function present(row: PublicKeyRow): PublicKey {
  return {
    data: row.data,
    fingerprint: row.fingerprint,
    name: row.name,
    username: row.username,
    filter: filterOf(row),
    tenant_id: row.tenant_id,
    created_at: new Date(row.created_at).toISOString(),
  };
}

function checkUsername(pattern: string | undefined): void {
  if (pattern !== undefined && !isValidPattern(pattern))
    throw new Invalid(['username'], 'not a valid regular expression');
}

/** A namespace's public keys, and the check the gateway makes when one is offered (SPEC.md sections 3 and 7). */
export class PublicKeyService {
  private readonly db: Knex;
  private readonly patterns = new PatternCache();
  /** Namespace-wide tag renames and deletes reach key filters through this (see tags/holders.ts). */
  readonly tagFilters = new TagFilterTable('public_keys', (row) => `public key "${row.name}"`);

  constructor(deps: { db: Knex }) {
    this.db = deps.db;
  }

  private store(tenantId: string): TenantStore {
    return new TenantStore(this.db, tenantId);
  }

  async list(
    tenantId: string,
    page: { page: number; per_page: number },
  ): Promise<{ items: PublicKey[]; total: number }> {
    const q = this.store(tenantId).table<PublicKeyRow>('public_keys');
    const [{ count } = { count: 0 }] = (await q.clone().count({ count: '*' })) as { count: number }[];
    const rows = (await q
      .orderBy('created_at', 'desc')
      .limit(page.per_page)
      .offset((page.page - 1) * page.per_page)) as PublicKeyRow[];
    return { items: rows.map(present), total: Number(count) };
  }

  async create(
    tenantId: string,
    body: { data: string; filter: DeviceFilter; name: string; username: string },
  ): Promise<PublicKey> {
    const key = parsePublicKeyData(body.data);
    if (!key) throw new Unprocessable('data is not a public key (base64 of an authorized_keys line)');
    checkUsername(body.username);
    const columns = filterColumns(body.filter);
    const store = this.store(tenantId);
    try {
      const [row] = (await store
        .insert('public_keys', {
          fingerprint: key.fingerprint,
          data: body.data,
          name: body.name,
          username: body.username,
          ...columns,
        })
        .returning('*')) as PublicKeyRow[];
      return present(row as PublicKeyRow);
    } catch (err) {
      throw fromDatabaseError(err, { public_keys_pkey: ['fingerprint'] });
    }
  }

  private async row(store: TenantStore, fingerprint: string): Promise<PublicKeyRow> {
    const row = (await store.table<PublicKeyRow>('public_keys').where({ fingerprint }).first()) as
      | PublicKeyRow
      | undefined;
    if (!row) throw new NotFound('public key');
    return row;
  }

  async update(
    tenantId: string,
    fingerprint: string,
    body: { filter?: DeviceFilter; name?: string; username?: string },
  ): Promise<PublicKey> {
    checkUsername(body.username);
    const store = this.store(tenantId);
    await this.row(store, fingerprint);
    const changes: Partial<PublicKeyRow> = {};
    if (body.name !== undefined) changes.name = body.name;
    if (body.username !== undefined) changes.username = body.username;
    if (body.filter !== undefined) Object.assign(changes, filterColumns(body.filter));
    if (Object.keys(changes).length) {
      await store.table('public_keys').where({ fingerprint }).update(changes);
    }
    return present(await this.row(store, fingerprint));
  }

  async remove(tenantId: string, fingerprint: string): Promise<void> {
    const gone = (await this.store(tenantId)
      .table('public_keys')
      .where({ fingerprint })
      .delete()
      .returning('fingerprint')) as unknown[];
    if (!gone.length) throw new NotFound('public key');
  }

  /** Adds a tag to the key's filter (a hostname filter becomes a tag filter). 406 past 3 tags. */
  async addTag(tenantId: string, fingerprint: string, tag: string): Promise<PublicKey> {
    const store = this.store(tenantId);
    const row = await this.row(store, fingerprint);
    const tags = row.filter_tags ?? [];
    if (tags.includes(tag)) throw new Conflict(['tag']);
    if (tags.length >= 3) throw new NotAcceptable('a public key has at most 3 tags');
    return this.setTags(tenantId, fingerprint, [...tags, tag]);
  }

  async setTags(tenantId: string, fingerprint: string, tags: string[]): Promise<PublicKey> {
    const store = this.store(tenantId);
    await this.row(store, fingerprint);
    await store
      .table('public_keys')
      .where({ fingerprint })
      .update({ filter_tags: tags, filter_hostname: null });
    return present(await this.row(store, fingerprint));
  }

  /** Removes a tag; the last tag cannot go (a tag filter has 1 to 3 tags): 406. */
  async removeTag(tenantId: string, fingerprint: string, tag: string): Promise<PublicKey> {
    const store = this.store(tenantId);
    const row = await this.row(store, fingerprint);
    const tags = row.filter_tags ?? [];
    if (!tags.includes(tag)) throw new NotFound('tag');
    if (tags.length === 1) throw new NotAcceptable('a tag filter keeps at least one tag');
    return this.setTags(
      tenantId,
      fingerprint,
      tags.filter((t) => t !== tag),
    );
  }

  /**
   * Whether the key with `fingerprint` may sign in as `username` on `device`: the key is registered in the
   * namespace, its username expression matches and its filter (hostname expression or tags) takes the device.
   */
  async allows(
    tenantId: string,
    fingerprint: string,
    username: string,
    device: DeviceFacts,
  ): Promise<boolean> {
    const row = (await this.store(tenantId)
      .table<PublicKeyRow>('public_keys')
      .where({ fingerprint })
      .first()) as PublicKeyRow | undefined;
    if (!row) return false;
    return this.patterns.test(row.username, username) && filterMatches(row, device, this.patterns);
  }
}
