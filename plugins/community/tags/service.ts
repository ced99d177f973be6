import { Conflict, type Hooks, Invalid, NotAcceptable, NotFound, TenantStore } from '@gatehouse/core';
import type { Knex } from 'knex';
import type { DeviceKind, DeviceService } from '../devices/service';

declare module '@gatehouse/core/hooks' {
  interface HookMap {
    /**
     * Tags live on devices, public keys and firewall rules. `GET /api/tags` lets each owner add its tags to the
     * set; renames and deletions across the namespace reach each owner through `tags.renamed` / `tags.deleted`.
     */
    'tags.collect': { tenantId: string; tags: Set<string> };
    'tags.renamed': { tenantId: string; from: string; to: string };
    'tags.deleted': { tenantId: string; tag: string };
  }
}

/** SPEC.md sections 5 and 9: at most 3 tags per device, unique, each 3 to 255 characters. */
export const MAX_TAGS = 3;

/** Device tags and the namespace-wide tag calls. */
export class TagService {
  private readonly db: Knex;
  private readonly devices: DeviceService;
  private readonly hooks: Hooks;

  constructor(deps: { db: Knex; devices: DeviceService; hooks: Hooks }) {
    this.db = deps.db;
    this.devices = deps.devices;
    this.hooks = deps.hooks;
  }

  /** `POST .../tags`: a fourth tag is 406 (SPEC.md section 8), a repeated one 409. */
  async add(tenantId: string, kind: DeviceKind, uid: string, tag: string): Promise<void> {
    const store = new TenantStore(this.db, tenantId);
    const row = await this.devices.row(store, kind, uid);
    if (row.tags.includes(tag)) throw new Conflict(['tag']);
    if (row.tags.length >= MAX_TAGS) throw new NotAcceptable(`a device has at most ${MAX_TAGS} tags`);
    // The guard in the update keeps two concurrent adds from making a fourth tag.
    const added = await store
      .table('devices')
      .where({ uid })
      .whereRaw('cardinality(tags) < ?', [MAX_TAGS])
      .whereRaw('not (tags @> ?::text[])', [[tag]])
      .update({ tags: this.db.raw('array_append(tags, ?::text)', [tag]) })
      .returning('uid');
    if (added.length === 0) throw new NotAcceptable(`a device has at most ${MAX_TAGS} tags`);
  }

  /** `PUT .../tags`: replaces the list (1 to 3 unique tags; more is 406). */
  async replace(tenantId: string, kind: DeviceKind, uid: string, tags: string[]): Promise<void> {
    if (tags.length > MAX_TAGS) throw new NotAcceptable(`a device has at most ${MAX_TAGS} tags`);
    if (new Set(tags).size !== tags.length) throw new Invalid(['tags'], 'tags must be unique');
    const store = new TenantStore(this.db, tenantId);
    await this.devices.row(store, kind, uid);
    await store
      .table('devices')
      .where({ uid })
      .update({ tags: this.db.raw('?::text[]', [tags]) });
  }

  async removeFromDevice(tenantId: string, kind: DeviceKind, uid: string, tag: string): Promise<void> {
    const store = new TenantStore(this.db, tenantId);
    const row = await this.devices.row(store, kind, uid);
    if (!row.tags.includes(tag)) throw new NotFound('tag');
    await store
      .table('devices')
      .where({ uid })
      .update({ tags: this.db.raw('array_remove(tags, ?::text)', [tag]) });
  }

  /** Every tag used in the namespace, sorted. */
  async list(tenantId: string): Promise<string[]> {
    const store = new TenantStore(this.db, tenantId);
    const rows = (await store
      .table('devices')
      .whereNot('status', 'removed')
      .distinct(this.db.raw('unnest(tags) as tag'))) as { tag: string }[];
    const tags = new Set(rows.map((r) => r.tag));
    await this.hooks.run('tags.collect', { tenantId, tags });
    return [...tags].sort();
  }

  /** Renames a tag on every device of the namespace; 404 when unused, 409 when the new name is taken. */
  async rename(tenantId: string, from: string, to: string): Promise<void> {
    const tags = await this.list(tenantId);
    if (!tags.includes(from)) throw new NotFound('tag');
    if (from === to) return;
    if (tags.includes(to)) throw new Conflict(['tag']);
    const store = new TenantStore(this.db, tenantId);
    await store
      .table('devices')
      .whereRaw('tags @> ?::text[]', [[from]])
      .update({ tags: this.db.raw('array_replace(tags, ?::text, ?::text)', [from, to]) });
    await this.hooks.run('tags.renamed', { tenantId, from, to });
  }

  async delete(tenantId: string, tag: string): Promise<void> {
    const tags = await this.list(tenantId);
    if (!tags.includes(tag)) throw new NotFound('tag');
    const store = new TenantStore(this.db, tenantId);
    await store
      .table('devices')
      .whereRaw('tags @> ?::text[]', [[tag]])
      .update({ tags: this.db.raw('array_remove(tags, ?::text)', [tag]) });
    await this.hooks.run('tags.deleted', { tenantId, tag });
  }
}
