import type { TenantModel, TenantStore } from '@gatehouse/core';
import { raw } from 'objection';

/** A tenant model whose rows hold a tag filter (`filter_tags`). */
type FilterModel = (new () => TenantModel) & { tableName: string };

/**
 * A table whose rows reach devices through a tag filter: `filter_tags text[]` holding 1 to 3 tags, or null when
 * the row filters by hostname instead (public keys, firewall rules). It answers the namespace-wide tag calls for
 * that table through the tag call's tenant store, which runs in the tag call's transaction when it changes things.
 */
export class TagFilterTable {
  constructor(
    private readonly model: FilterModel,
    /** How a row is named in a refusal, e.g. `public key "laptop"`. */
    private readonly describe: (row: Record<string, unknown>) => string,
  ) {}

  async collect(tenant: TenantStore, tags: Set<string>): Promise<void> {
    const rows = (await tenant
      .query(this.model)
      .whereNotNull('filter_tags')
      .distinct(raw('unnest(filter_tags) as tag'))) as unknown as { tag: string }[];
    for (const r of rows) tags.add(r.tag);
  }

  async rename(tenant: TenantStore, from: string, to: string): Promise<void> {
    await tenant
      .query(this.model)
      .whereRaw('filter_tags @> ?::text[]', [[from]])
      .patch({ filter_tags: raw('array_replace(filter_tags, ?::text, ?::text)', [from, to]) } as never);
  }

  /** Rows whose filter has `tag` as its only tag: deleting the tag would leave them with an empty filter. */
  async soleHolders(tenant: TenantStore, tag: string): Promise<string[]> {
    const rows = (await tenant
      .query(this.model)
      .whereRaw('filter_tags = ?::text[]', [[tag]])) as unknown as Record<string, unknown>[];
    return rows.map(this.describe);
  }

  async remove(tenant: TenantStore, tag: string): Promise<void> {
    await tenant
      .query(this.model)
      .whereRaw('filter_tags @> ?::text[]', [[tag]])
      .patch({ filter_tags: raw('array_remove(filter_tags, ?::text)', [tag]) } as never);
  }
}
