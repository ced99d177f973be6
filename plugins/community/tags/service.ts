import { Conflict, type Hooks, Invalid, NotAcceptable, NotFound, type TenantStore } from '@gatehouse/core';
import type { Knex } from 'knex';
import { raw } from 'objection';
import { Device, type DeviceKind } from '../devices/model';
import { Namespace } from '../namespaces/model';

/** At most 3 tags per device, unique, each 3 to 255 characters. */
export const MAX_TAGS = 3;

/** Device tags and the namespace-wide tag calls, for the caller's namespace (request scope). */
export class TagService {
  private readonly db: Knex;
  private readonly tenant: TenantStore;
  private readonly hooks: Hooks;

  constructor(deps: { db: Knex; tenant: TenantStore; hooks: Hooks }) {
    this.db = deps.db;
    this.tenant = deps.tenant;
    this.hooks = deps.hooks;
  }

  /** `POST .../tags`: a fourth tag is 406, a repeated one 409. */
  async add(kind: DeviceKind, uid: string, tag: string): Promise<void> {
    const row = await this.device(kind, uid);
    if (row.tags.includes(tag)) throw new Conflict(['tag']);
    if (row.tags.length >= MAX_TAGS) throw new NotAcceptable(`a device has at most ${MAX_TAGS} tags`);
    // The guard in the update keeps two concurrent adds from making a fourth tag.
    const added = await this.tenant
      .query(Device)
      .where({ uid })
      .whereRaw('cardinality(tags) < ?', [MAX_TAGS])
      .whereRaw('not (tags @> ?::text[])', [[tag]])
      .patch({ tags: raw('array_append(tags, ?::text)', [tag]) as never });
    if (added === 0) throw new NotAcceptable(`a device has at most ${MAX_TAGS} tags`);
  }

  /** `PUT .../tags`: replaces the list (1 to 3 unique tags; more is 406). */
  async replace(kind: DeviceKind, uid: string, tags: string[]): Promise<void> {
    if (tags.length > MAX_TAGS) throw new NotAcceptable(`a device has at most ${MAX_TAGS} tags`);
    if (new Set(tags).size !== tags.length) throw new Invalid(['tags'], 'tags must be unique');
    await this.device(kind, uid);
    await this.tenant
      .query(Device)
      .where({ uid })
      .patch({ tags: raw('?::text[]', [tags]) as never });
  }

  async removeFromDevice(kind: DeviceKind, uid: string, tag: string): Promise<void> {
    const row = await this.device(kind, uid);
    if (!row.tags.includes(tag)) throw new NotFound('tag');
    await this.tenant
      .query(Device)
      .where({ uid })
      .patch({ tags: raw('array_remove(tags, ?::text)', [tag]) as never });
  }

  /** Every tag used in the namespace (devices, public keys, firewall rules), sorted. */
  async list(tenant: TenantStore = this.tenant): Promise<string[]> {
    const rows = (await tenant
      .query(Device)
      .whereNot('status', 'removed')
      .distinct(raw('unnest(tags) as tag'))) as unknown as { tag: string }[];
    const tags = new Set(rows.map((r) => r.tag));
    await this.hooks.run('tags.collect', {
      tenantId: tenant.tenantId,
      tags,
      db: tenant.trx ?? tenant.db,
      tenant,
    });
    return [...tags].sort();
  }

  /**
   * Renames a tag on every device, public key and firewall rule of the namespace, in one transaction; 404 when
   * unused, 409 when the new name is taken anywhere in the namespace (so no tag list gets it twice).
   */
  async rename(from: string, to: string): Promise<void> {
    await this.namespaceWide(async (tenant, trx, tags) => {
      if (!tags.includes(from)) throw new NotFound('tag');
      if (from === to) return;
      if (tags.includes(to)) throw new Conflict(['tag']);
      await tenant
        .query(Device)
        .whereRaw('tags @> ?::text[]', [[from]])
        .patch({ tags: raw('array_replace(tags, ?::text, ?::text)', [from, to]) as never });
      await this.hooks.run('tags.renamed', { tenantId: tenant.tenantId, from, to, db: trx, tenant });
    });
  }

  /**
   * Deletes a tag from every device, public key and firewall rule of the namespace, in one transaction. A key or
   * rule filter keeps 1 to 3 tags, and an empty one must not turn into "every device": when
   * the tag is the last one of some filter, the whole delete is refused with 406 and nothing changes; the user
   * gives those filters another tag (or deletes them) first, as removing a filter's last tag one by one is 406.
   */
  async delete(tag: string): Promise<void> {
    await this.namespaceWide(async (tenant, trx, tags) => {
      if (!tags.includes(tag)) throw new NotFound('tag');
      await tenant
        .query(Device)
        .whereRaw('tags @> ?::text[]', [[tag]])
        .patch({ tags: raw('array_remove(tags, ?::text)', [tag]) as never });
      await this.hooks.run('tags.deleted', { tenantId: tenant.tenantId, tag, db: trx, tenant });
    });
  }

  /** A device of this namespace and kind (its tags), or 404: another namespace's device is never reachable. */
  private async device(kind: DeviceKind, uid: string): Promise<Pick<Device, 'uid' | 'tags'>> {
    const row = await this.tenant.query(Device).findOne({ uid, kind }).select('uid', 'tags');
    if (!row) throw new NotFound(kind);
    return { uid: row.uid, tags: row.tags ?? [] };
  }

  /**
   * Runs a namespace-wide change in one transaction that holds the namespace row, so two renames or deletes in
   * one namespace run one after the other; `tags` is the namespace's tag set as that transaction sees it.
   */
  private async namespaceWide(
    change: (tenant: TenantStore, trx: Knex.Transaction, tags: string[]) => Promise<void>,
  ): Promise<void> {
    await this.tenant.transaction(async (tenant, trx) => {
      const ns = await Namespace.bindKnex(this.db)
        .query(trx)
        .findById(tenant.tenantId)
        .forUpdate()
        .select('tenant_id');
      if (!ns) throw new NotFound('namespace');
      await change(tenant, trx, await this.list(tenant));
    });
  }
}
