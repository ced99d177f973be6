import { Type as T, type TProperties, type TString } from '@sinclair/typebox';
import type { Knex } from 'knex';
import type { Context } from 'koa';
import { Invalid } from '../errors';

/** `page` >= 1 (default 1) and `per_page` 1..100 (default 10), SPEC.md section 5. */
export const pageQuery = {
  page: T.Integer({ minimum: 1, default: 1, description: 'Page number, from 1.' }),
  per_page: T.Integer({ minimum: 1, maximum: 100, default: 10, description: 'Items per page, 1 to 100.' }),
};

/** The query of a list call: paging, the base64 filter, and sorting over the given fields. */
export function listQuery<P extends TProperties = Record<never, never>>(
  opts: { sortBy?: string[]; sortDefault?: string; extra?: P } = {},
) {
  // Validated as the union of the allowed fields; typed as a string for handlers.
  const sortBy = (opts.sortBy
    ? T.Union(
        opts.sortBy.map((s) => T.Literal(s)),
        { default: opts.sortDefault ?? opts.sortBy[0], description: 'Field to sort by.' },
      )
    : T.String({ default: '', description: 'Field to sort by.' })) as unknown as TString;
  // Unknown query parameters (cache busters and the like) are tolerated: TypeBox objects allow extra keys.
  return T.Object({
    ...pageQuery,
    filter: T.Optional(T.String({ description: 'Base64 of a JSON list of property and operator items.' })),
    sort_by: sortBy,
    order_by: T.Union([T.Literal('asc'), T.Literal('desc')], { default: 'desc', description: 'Sort order.' }),
    ...((opts.extra ?? {}) as P),
  });
}

export type FilterOperator = 'contains' | 'eq' | 'bool' | 'gt' | 'lt';
export type FilterItem =
  | { type: 'property'; params: { name: string; operator: FilterOperator; value: unknown } }
  | { type: 'operator'; params: { name: 'and' | 'or' } };

/** A filterable property: its column and kind (decides how each operator reads). */
export interface FilterField {
  column: string;
  kind: 'string' | 'number' | 'boolean' | 'date' | 'array';
}

const operators = new Set(['contains', 'eq', 'bool', 'gt', 'lt']);

/** Decodes the base64 JSON filter; anything malformed is 400 naming `filter`. */
export function parseFilter(encoded: string | undefined): FilterItem[] {
  if (!encoded) return [];
  let parsed: unknown;
  try {
    const text = Buffer.from(encoded, 'base64').toString('utf8');
    parsed = JSON.parse(text);
  } catch {
    throw new Invalid(['filter'], 'filter must be base64-encoded JSON');
  }
  if (!Array.isArray(parsed)) throw new Invalid(['filter'], 'filter must be a JSON list');
  if (parsed.length > 32) throw new Invalid(['filter'], 'filter has too many items');
  return parsed.map((item: unknown) => {
    const i = item as { type?: unknown; params?: { name?: unknown; operator?: unknown; value?: unknown } };
    if (i?.type === 'operator' && (i.params?.name === 'and' || i.params?.name === 'or')) {
      return { type: 'operator', params: { name: i.params.name } };
    }
    if (
      i?.type === 'property' &&
      typeof i.params?.name === 'string' &&
      typeof i.params.operator === 'string' &&
      operators.has(i.params.operator)
    ) {
      return {
        type: 'property',
        params: { name: i.params.name, operator: i.params.operator as FilterOperator, value: i.params.value },
      };
    }
    throw new Invalid(['filter'], 'filter items are property or operator items');
  });
}

/**
 * Adds the filter to a query. Conditions are joined left to right by the latest operator item (and by default),
 * so `a, or, b, and, c` reads ((a or b) and c).
 */
export function applyFilter<T extends object>(
  qb: Knex.QueryBuilder<T>,
  items: FilterItem[],
  fields: Record<string, FilterField>,
): Knex.QueryBuilder<T> {
  type Clause = (b: Knex.QueryBuilder) => void;
  let clause: Clause | undefined;
  let join: 'and' | 'or' = 'and';
  for (const item of items) {
    if (item.type === 'operator') {
      join = item.params.name;
      continue;
    }
    const field = fields[item.params.name];
    if (!field) throw new Invalid(['filter'], `cannot filter on ${item.params.name}`);
    const cond = condition(field, item.params.operator, item.params.value);
    const prev = clause;
    clause = prev
      ? (b) => {
          b.where(prev);
          if (join === 'and') b.andWhere(cond);
          else b.orWhere(cond);
        }
      : (b) => {
          b.where(cond);
        };
  }
  if (clause) qb.where(clause as never);
  return qb;
}

function condition(field: FilterField, op: FilterOperator, value: unknown): (b: Knex.QueryBuilder) => void {
  const col = field.column;
  const bad = () => new Invalid(['filter'], `operator ${op} does not fit this property or value`);
  switch (op) {
    case 'contains':
      if (typeof value !== 'string') throw bad();
      if (field.kind === 'array') return (b) => void b.whereRaw('?? @> ?::text[]', [col, [value]]);
      if (field.kind !== 'string') throw bad();
      return (b) => void b.whereILike(col, `%${value.replace(/[\\%_]/g, '\\$&')}%`);
    case 'eq':
      if (field.kind === 'array') {
        if (typeof value !== 'string') throw bad();
        return (b) => void b.whereRaw('?? @> ?::text[]', [col, [value]]);
      }
      if (value === null || typeof value === 'object') throw bad();
      return (b) => void b.where(col, value as string | number | boolean);
    case 'bool': {
      const v =
        value === true || value === 'true' ? true : value === false || value === 'false' ? false : null;
      if (v === null || field.kind !== 'boolean') throw bad();
      return (b) => void b.where(col, v);
    }
    case 'gt':
    case 'lt': {
      if (!['number', 'date'].includes(field.kind)) throw bad();
      if (typeof value !== 'number' && typeof value !== 'string') throw bad();
      if (field.kind === 'number' && !Number.isFinite(Number(value))) throw bad();
      if (field.kind === 'date' && Number.isNaN(new Date(value).getTime())) throw bad();
      return (b) =>
        void b.where(col, op === 'gt' ? '>' : '<', field.kind === 'date' ? new Date(value) : Number(value));
    }
  }
}

/** Runs a paged query, putting the total in `X-Total-Count` (SPEC.md section 7). */
export async function paginate<Row>(
  ctx: Context,
  qb: Knex.QueryBuilder,
  query: { page: number; per_page: number },
  order?: { column: string; direction: 'asc' | 'desc' },
): Promise<Row[]> {
  const countQuery = qb.clone().clearSelect().clearOrder().count<{ count: number }[]>({ count: '*' });
  const [{ count } = { count: 0 }] = await countQuery;
  if (order) qb.orderBy(order.column, order.direction, order.direction === 'desc' ? 'last' : 'first');
  const rows = (await qb.limit(query.per_page).offset((query.page - 1) * query.per_page)) as Row[];
  ctx.set('X-Total-Count', String(count));
  ctx.set('Access-Control-Expose-Headers', 'X-Total-Count');
  return rows;
}
