import {
  Conflict,
  fromDatabaseError,
  Invalid,
  listPage,
  NotAcceptable,
  NotFound,
  type Page,
  TenantStore,
  Unprocessable,
} from '@gatehouse/core';
import type { Static } from '@sinclair/typebox';
import type { Knex } from 'knex';
import {
  type DeviceFacts,
  type FilterColumns,
  filterColumns,
  filterMatches,
  filterOf,
} from '../matching/device-filter';
import { isValidPattern, PatternCache } from '../matching/pattern';
import { TagFilterTable } from '../tags/filter-tables';
import { parsePublicKeyData } from './fingerprint';
import { PublicKey } from './model';
import type { createPublicKeyBody, PublicKeyView, updatePublicKeyBody } from './schemas';

function present(row: PublicKey): PublicKeyView {
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

/** The public keys of the caller's namespace (request scope): the public key calls. */
export class NamespacePublicKeys {
  private readonly tenant: TenantStore;

  constructor(deps: { tenant: TenantStore }) {
    this.tenant = deps.tenant;
  }

  private keys() {
    return this.tenant.query(PublicKey);
  }

  async list(page: { page: number; per_page: number }): Promise<Page<PublicKeyView>> {
    const found = await listPage(this.keys(), page, { column: 'created_at', direction: 'desc' });
    return { items: found.items.map(present), total: found.total };
  }

  async create(body: Static<typeof createPublicKeyBody>): Promise<PublicKeyView> {
    const key = parsePublicKeyData(body.data);
    if (!key) throw new Unprocessable('data is not a public key (base64 of an authorized_keys line)');
    checkUsername(body.username);
    try {
      const row = await this.keys()
        .insert({
          fingerprint: key.fingerprint,
          data: body.data,
          name: body.name,
          username: body.username,
          ...filterColumns(body.filter),
        })
        .returning('*');
      return present(row);
    } catch (err) {
      throw fromDatabaseError(err, { public_keys_pkey: ['fingerprint'] });
    }
  }

  private async row(fingerprint: string): Promise<PublicKey> {
    const row = await this.keys().findOne({ fingerprint });
    if (!row) throw new NotFound('public key');
    return row;
  }

  async update(fingerprint: string, body: Static<typeof updatePublicKeyBody>): Promise<PublicKeyView> {
    checkUsername(body.username);
    await this.row(fingerprint);
    const changes: Partial<FilterColumns & { name: string; username: string }> = {};
    if (body.name !== undefined) changes.name = body.name;
    if (body.username !== undefined) changes.username = body.username;
    if (body.filter !== undefined) Object.assign(changes, filterColumns(body.filter));
    if (Object.keys(changes).length) await this.keys().where({ fingerprint }).patch(changes);
    return present(await this.row(fingerprint));
  }

  async remove(fingerprint: string): Promise<void> {
    const gone = await this.keys().where({ fingerprint }).delete();
    if (gone === 0) throw new NotFound('public key');
  }

  /** Adds a tag to the key's filter (a hostname filter becomes a tag filter). 406 past 3 tags. */
  async addTag(fingerprint: string, tag: string): Promise<PublicKeyView> {
    const row = await this.row(fingerprint);
    const tags = row.filter_tags ?? [];
    if (tags.includes(tag)) throw new Conflict(['tag']);
    if (tags.length >= 3) throw new NotAcceptable('a public key has at most 3 tags');
    return this.setTags(fingerprint, [...tags, tag]);
  }

  async setTags(fingerprint: string, tags: string[]): Promise<PublicKeyView> {
    await this.row(fingerprint);
    await this.keys().where({ fingerprint }).patch({ filter_tags: tags, filter_hostname: null });
    return present(await this.row(fingerprint));
  }

  /** Removes a tag; the last tag cannot go (a tag filter has 1 to 3 tags): 406. */
  async removeTag(fingerprint: string, tag: string): Promise<PublicKeyView> {
    const row = await this.row(fingerprint);
    const tags = row.filter_tags ?? [];
    if (!tags.includes(tag)) throw new NotFound('tag');
    if (tags.length === 1) throw new NotAcceptable('a tag filter keeps at least one tag');
    return this.setTags(
      fingerprint,
      tags.filter((t) => t !== tag),
    );
  }
}

/**
 * Public keys as the SSH gateway meets them: the check it makes when a key is offered, in the namespace of the
 * device it has established, and the key filters namespace-wide tag renames reach (tags/holders.ts).
 */
export class PublicKeyService {
  private readonly db: Knex;
  private readonly patterns = new PatternCache();
  /** Namespace-wide tag renames and deletes reach key filters through this (see tags/holders.ts). */
  readonly tagFilters = new TagFilterTable(PublicKey, (row) => `public key "${row.name}"`);

  constructor(deps: { db: Knex }) {
    this.db = deps.db;
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
    const row = await new TenantStore(this.db, tenantId).query(PublicKey).findOne({ fingerprint });
    if (!row) return false;
    return this.patterns.test(row.username, username) && filterMatches(row, device, this.patterns);
  }
}
