import type { Knex } from 'knex';
import { Forbidden } from '../errors';

/**
 * Tenant data is reached only through this: every query it builds is bound to one namespace, so a handler cannot
 * forget `where tenant_id = ?` (STYLE.md example 6). Held in the request scope with the caller's tenant.
 */
export class TenantStore {
  constructor(
    private readonly db: Knex,
    readonly tenantId: string,
  ) {}

  /** A query builder on `table` restricted to this tenant (`column` names the tenant column). */
  table<T extends object = Record<string, unknown>>(
    table: string,
    column = 'tenant_id',
  ): Knex.QueryBuilder<T> {
    return this.db<T>(table).where(`${table}.${column}`, this.tenantId);
  }

  /** Inserts rows stamped with this tenant. */
  insert<T extends object>(table: string, rows: T | T[], column = 'tenant_id'): Knex.QueryBuilder {
    const list = (Array.isArray(rows) ? rows : [rows]).map((r) => ({ ...r, [column]: this.tenantId }));
    return this.db(table).insert(list);
  }

  /** Runs `fn` in a transaction whose store is still bound to this tenant. */
  transaction<R>(fn: (store: TenantStore, trx: Knex.Transaction) => Promise<R>): Promise<R> {
    return this.db.transaction((trx) => fn(new TenantStore(trx, this.tenantId), trx));
  }
}

/** For callers without a namespace (a user who has none yet): every tenant query is refused. */
export function requireTenant(tenantId: string | undefined): string {
  if (!tenantId) throw new Forbidden('this call needs a namespace; switch to one first');
  return tenantId;
}
