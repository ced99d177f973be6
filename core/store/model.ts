import type { Knex } from 'knex';
import { Model, type QueryBuilderType, type QueryContext } from 'objection';

/**
 * Where a tenant model query keeps the tenant it reads and writes. A symbol: no column or user context key can
 * collide with it, and only this file sets it. Objection copies the query context to the queries it starts for
 * relations, so a related tenant model is bound to the same tenant. A registered symbol, because the same module
 * may be evaluated twice in one process (loaded as ESM and as CommonJS through tsx) and both must agree.
 */
const TENANT = Symbol.for('gatehouse.store.tenant');
/** Marks a query that deliberately spans every tenant (`TenantModel.acrossTenants`). */
const ACROSS = Symbol.for('gatehouse.store.acrossTenants');

interface TenantContext {
  [TENANT]?: string;
  [ACROSS]?: true;
}

/**
 * The base of every Gatehouse model: one class per stored entity, its table and relations, beside the feature that
 * owns it (`<feature>/model.ts` in its plugin). A model class is never bound to a global knex: a service binds it
 * to its kernel's store with `Model.bindKnex(db)` (objection caches the bound class per knex instance), or passes a
 * transaction to `query(trx)`, so two kernels in one process each use their own store.
 *
 * Rows keep the column names the API answers with (snake_case), so a model's properties are its columns. Input is
 * validated at the edge by the route schemas (core/validation.ts), not again by the model.
 */
export class StoreModel extends Model {
  /** `first()` adds `limit 1`: a look-up by a unique key should not read on after its row. */
  static override useLimitInFirst = true;
}

/**
 * A model of a tenant-owned table (a `tenant_id` column naming the namespace). Its queries are built bound to one
 * tenant and cannot be built without one:
 *
 * - reads, updates and deletes get `where <table>.tenant_id = <tenant>` when the query is built;
 * - inserted rows are stamped with the tenant, and a row naming another tenant is refused;
 * - an update cannot move a row to another tenant;
 * - a query that was not given a tenant throws before it reaches the store.
 *
 * The tenant comes from the request scope: `tenant.query(Device)` (core/store/tenant.ts) in a service resolved from
 * the scope. Code that has no request (the SSH gateway, jobs) makes a `TenantStore` for the tenant it has
 * established, and the few calls that span tenants on purpose (instance administration, look-ups by a globally
 * unique key) say so with `acrossTenants`.
 */
export class TenantModel extends StoreModel {
  /** The column holding the tenant; a model whose table names it otherwise overrides this. */
  static tenantColumn = 'tenant_id';

  /** Every query of a tenant model checks its tenant binding when it is built (see the class comment). */
  static onCreateQuery(query: QueryBuilderType<Model>): void {
    query.onBuildKnex((knexQuery, builder) => {
      const model = builder.modelClass() as typeof TenantModel;
      const ctx = builder.context() as TenantContext;
      if (ctx[ACROSS]) return;
      const tenant = ctx[TENANT];
      if (!tenant)
        throw new Error(
          `${model.name}: a tenant model is queried through the tenant store (tenant.query) or acrossTenants`,
        );
      // An insert carries the tenant in its rows ($beforeInsert); everything else is restricted to it.
      if (builder.isInsert()) return;
      knexQuery.where(`${builder.tableRefFor(model)}.${model.tenantColumn}`, tenant);
    });
  }

  override $beforeInsert(queryContext: QueryContext): void {
    const ctx = queryContext as TenantContext;
    const column = (this.constructor as typeof TenantModel).tenantColumn;
    const row = this as unknown as Record<string, unknown>;
    if (ctx[ACROSS]) {
      if (typeof row[column] !== 'string')
        throw new Error(`${this.constructor.name}: a row inserted across tenants names its tenant`);
      return;
    }
    const tenant = ctx[TENANT];
    if (!tenant) throw new Error(`${this.constructor.name}: inserted without a tenant`);
    if (row[column] !== undefined && row[column] !== tenant)
      throw new Error(`${this.constructor.name}: a row of another tenant cannot be inserted here`);
    row[column] = tenant;
  }

  override $beforeUpdate(_opt: unknown, queryContext: QueryContext): void {
    const ctx = queryContext as TenantContext;
    const column = (this.constructor as typeof TenantModel).tenantColumn;
    const row = this as unknown as Record<string, unknown>;
    if (row[column] !== undefined && !ctx[ACROSS] && row[column] !== ctx[TENANT])
      throw new Error(`${this.constructor.name}: a row cannot be moved to another tenant`);
  }

  /**
   * A query over every tenant's rows, for the calls that span tenants by design: instance administration, and
   * look-ups by a key that is unique across the installation (an API key's digest, a device uid from its token).
   * Grep for it to review every such place.
   */
  static acrossTenants<M extends Model>(
    this: new () => M,
    db: Knex,
    trx?: Knex.Transaction,
  ): QueryBuilderType<M> {
    // biome-ignore lint/complexity/noThisInStatic: the model class it is called on (Device, ApiKey...), not this one
    const bound = (this as unknown as typeof TenantModel).bindKnex(db);
    return bound.query(trx).context({ [ACROSS]: true }) as unknown as QueryBuilderType<M>;
  }
}

/**
 * The query of `model` bound to `tenantId` on `db` (or `trx`). The tenant store calls it; everything else asks the
 * tenant store.
 */
export function tenantQuery<M extends TenantModel>(
  model: new () => M,
  db: Knex,
  tenantId: string,
  trx?: Knex.Transaction,
): QueryBuilderType<M> {
  const bound = (model as unknown as typeof TenantModel).bindKnex(db);
  return bound.query(trx).context({ [TENANT]: tenantId }) as unknown as QueryBuilderType<M>;
}
