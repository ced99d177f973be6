import type { Knex } from 'knex';
import type { QueryBuilderType } from 'objection';
import { Forbidden } from '../errors';
import { type TenantModel, tenantQuery } from './model';

/**
 * Tenant data is reached only through this: every query it builds is bound to one namespace, so a handler cannot
 * forget `where tenant_id = ?`. The router binds one to the caller's tenant in each request
 * scope (`tenant` in the cradle); services that read or write tenant data are scoped and take it as a dependency,
 * so they cannot be asked for another tenant's rows. Code without a request (the SSH gateway, jobs) makes one for
 * the tenant it has established.
 */
export class TenantStore {
  constructor(
    readonly db: Knex,
    readonly tenantId: string,
    /** Set on the store `transaction` hands out: its queries run in that transaction. */
    readonly trx?: Knex.Transaction,
  ) {}

  /**
   * The query of a tenant model, restricted to this tenant (reads, updates, deletes) and stamping it on inserted
   * rows. Runs in `trx` when given, else in this store's transaction, if any.
   */
  query<M extends TenantModel>(model: new () => M, trx = this.trx): QueryBuilderType<M> {
    return tenantQuery(model, this.db, this.tenantId, trx);
  }

  /** A query builder on `table` restricted to this tenant (`column` names the tenant column). */
  table<T extends object = Record<string, unknown>>(
    table: string,
    column = 'tenant_id',
  ): Knex.QueryBuilder<T> {
    return (this.trx ?? this.db)<T>(table).where(`${table}.${column}`, this.tenantId);
  }

  /** Inserts rows stamped with this tenant. */
  insert<T extends object>(table: string, rows: T | T[], column = 'tenant_id'): Knex.QueryBuilder {
    const list = (Array.isArray(rows) ? rows : [rows]).map((r) => ({ ...r, [column]: this.tenantId }));
    return (this.trx ?? this.db)(table).insert(list);
  }

  /** Runs `fn` in a transaction whose store is still bound to this tenant. */
  transaction<R>(fn: (store: TenantStore, trx: Knex.Transaction) => Promise<R>): Promise<R> {
    if (this.trx) return fn(this, this.trx);
    return this.db.transaction((trx) => fn(new TenantStore(this.db, this.tenantId, trx), trx));
  }
}

/** For callers without a namespace (a user who has none yet): every tenant query is refused. */
export function requireTenant(tenantId: string | undefined): string {
  if (!tenantId) throw new Forbidden('this call needs a namespace; switch to one first');
  return tenantId;
}
