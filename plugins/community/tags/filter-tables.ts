import { TenantStore } from '@gatehouse/core';
import type { Knex } from 'knex';

/**
 * A table whose rows reach devices through a tag filter: `filter_tags text[]` holding 1 to 3 tags, or null when
 * the row filters by hostname instead (public keys, firewall rules). It answers the namespace-wide tag calls for
 * that table; every method takes the connection to use, which is the tag call's transaction when it changes things.
 */
export class TagFilterTable {
  constructor(
    private readonly table: string,
    /** How a row is named in a refusal, e.g. `public key "laptop"`. */
    private readonly describe: (row: Record<string, unknown>) => string,
  ) {}

  async collect(db: Knex, tenantId: string, tags: Set<string>): Promise<void> {
    const rows = (await new TenantStore(db, tenantId)
      .table(this.table)
      .whereNotNull('filter_tags')
      .distinct(db.raw('unnest(filter_tags) as tag'))) as { tag: string }[];
    for (const r of rows) tags.add(r.tag);
  }

  async rename(db: Knex, tenantId: string, from: string, to: string): Promise<void> {
    await new TenantStore(db, tenantId)
      .table(this.table)
      .whereRaw('filter_tags @> ?::text[]', [[from]])
      .update({ filter_tags: db.raw('array_replace(filter_tags, ?::text, ?::text)', [from, to]) });
  }

  /** Rows whose filter has `tag` as its only tag: deleting the tag would leave them with an empty filter. */
  async soleHolders(db: Knex, tenantId: string, tag: string): Promise<string[]> {
    const rows = (await new TenantStore(db, tenantId)
      .table(this.table)
      .whereRaw('filter_tags = ?::text[]', [[tag]])) as Record<string, unknown>[];
    return rows.map(this.describe);
  }

  async remove(db: Knex, tenantId: string, tag: string): Promise<void> {
    await new TenantStore(db, tenantId)
      .table(this.table)
      .whereRaw('filter_tags @> ?::text[]', [[tag]])
      .update({ filter_tags: db.raw('array_remove(filter_tags, ?::text)', [tag]) });
  }
}
