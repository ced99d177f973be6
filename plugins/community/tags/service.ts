import { Conflict, type Hooks, Invalid, NotAcceptable, NotFound, TenantStore } from '@gatehouse/core';
import type { Knex } from 'knex';
import type { DeviceKind, DeviceService } from '../devices/service';

declare module '@gatehouse/core/hooks' {
  interface HookMap {
    /**
     * Tags live on devices, public keys and firewall rules. `GET /api/tags` lets each owner add its tags to the
     * set; renames and deletions across the namespace reach each owner through `tags.renamed` / `tags.deleted`.
     * Every handler queries through `db`: inside a rename or delete it is the transaction that also changes the
     * devices (the embedded store has one connection, so a query on the pool there would wait forever). A
     * handler that throws undoes the whole rename or delete.
     */
    'tags.collect': { tenantId: string; tags: Set<string>; db: Knex };
    'tags.renamed': { tenantId: string; from: string; to: string; db: Knex.Transaction };
    'tags.deleted': { tenantId: string; tag: string; db: Knex.Transaction };
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

  /** Every tag used in the namespace (devices, public keys, firewall rules), sorted. */
  async list(tenantId: string, db: Knex = this.db): Promise<string[]> {
    const store = new TenantStore(db, tenantId);
    const rows = (await store
      .table('devices')
      .whereNot('status', 'removed')
      .distinct(db.raw('unnest(tags) as tag'))) as { tag: string }[];
    const tags = new Set(rows.map((r) => r.tag));
    await this.hooks.run('tags.collect', { tenantId, tags, db });
    return [...tags].sort();
  }

  /**
   * Renames a tag on every device, public key and firewall rule of the namespace, in one transaction; 404 when
   * unused, 409 when the new name is taken anywhere in the namespace (so no tag list gets it twice).
   */
  async rename(tenantId: string, from: string, to: string): Promise<void> {
    await this.namespaceWide(tenantId, async (trx, tags) => {
      if (!tags.includes(from)) throw new NotFound('tag');
      if (from === to) return;
      if (tags.includes(to)) throw new Conflict(['tag']);
      await new TenantStore(trx, tenantId)
        .table('devices')
        .whereRaw('tags @> ?::text[]', [[from]])
        .update({ tags: trx.raw('array_replace(tags, ?::text, ?::text)', [from, to]) });
      await this.hooks.run('tags.renamed', { tenantId, from, to, db: trx });
    });
  }

  /**
   * Deletes a tag from every device, public key and firewall rule of the namespace, in one transaction. A key or
   * rule filter keeps 1 to 3 tags (SPEC.md section 5), and an empty one must not turn into "every device": when
   * the tag is the last one of some filter, the whole delete is refused with 406 and nothing changes; the user
   * gives those filters another tag (or deletes them) first, as removing a filter's last tag one by one is 406.
   */
  async delete(tenantId: string, tag: string): Promise<void> {
    await this.namespaceWide(tenantId, async (trx, tags) => {
      if (!tags.includes(tag)) throw new NotFound('tag');
      await new TenantStore(trx, tenantId)
        .table('devices')
        .whereRaw('tags @> ?::text[]', [[tag]])
        .update({ tags: trx.raw('array_remove(tags, ?::text)', [tag]) });
      await this.hooks.run('tags.deleted', { tenantId, tag, db: trx });
    });
  }

  /**
   * Runs a namespace-wide change in one transaction that holds the namespace row, so two renames or deletes in
   * one namespace run one after the other; `tags` is the namespace's tag set as that transaction sees it.
   */
  private async namespaceWide(
    tenantId: string,
    change: (trx: Knex.Transaction, tags: string[]) => Promise<void>,
  ): Promise<void> {
    await this.db.transaction(async (trx) => {
      const ns = await trx('namespaces').where({ tenant_id: tenantId }).forUpdate().first('tenant_id');
      if (!ns) throw new NotFound('namespace');
      await change(trx, await this.list(tenantId, trx));
    });
  }
}
