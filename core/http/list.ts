import { Type as T, type TProperties, type TString } from '@sinclair/typebox';
import type { Knex } from 'knex';
import type { Model, QueryBuilder } from 'objection';
import { Invalid } from '../errors';
import { unstorableFields } from '../validation';
import type { Page } from './route';

/** `page` >= 1 (default 1) and `per_page` 1..100 (default 10). */
export const pageQuery = {
  page: T.Integer({ minimum: 1, default: 1, description: 'Page number, from 1.' }),
  per_page: T.Integer({ minimum: 1, maximum: 100, default: 10, description: 'Items per page, 1 to 100.' }),
};

/**
 * The query of a list call: paging, the base64 filter (unless `filter` is false: a list that filters on nothing
 * does not offer it), and sorting over the given fields.
 */
export function listQuery<P extends TProperties = Record<never, never>>(
  opts: {
    sortBy?: string[];
    sortDefault?: string;
    /** A pattern of further sort fields, beside the named ones (the keys of a JSON column, say). */
    sortPattern?: { pattern: string; description: string };
    filter?: boolean;
    extra?: P;
  } = {},
) {
  // Validated as the union of the allowed fields; typed as a string for handlers.
  const sortBy = (opts.sortBy
    ? T.Union(
        [
          ...opts.sortBy.map((s) => T.Literal(s)),
          ...(opts.sortPattern
            ? [T.String({ pattern: opts.sortPattern.pattern, description: opts.sortPattern.description })]
            : []),
        ],
        { default: opts.sortDefault ?? opts.sortBy[0], description: 'Field to sort by.' },
      )
    : T.String({ default: '', description: 'Field to sort by.' })) as unknown as TString;
  // Unknown query parameters (cache busters and the like) are tolerated: TypeBox objects allow extra keys.
  return T.Object({
    ...pageQuery,
    ...(opts.filter === false
      ? {}
      : {
          filter: T.Optional(
            T.String({ description: 'Base64 of a JSON list of property and operator items.' }),
          ),
        }),
    sort_by: sortBy,
    order_by: T.Union([T.Literal('asc'), T.Literal('desc')], { default: 'desc', description: 'Sort order.' }),
    ...((opts.extra ?? {}) as P),
  });
}

export type FilterOperator = 'contains' | 'eq' | 'bool' | 'gt' | 'lt';
export type FilterItem =
  | { type: 'property'; params: { name: string; operator: FilterOperator; value: unknown } }
  | { type: 'operator'; params: { name: 'and' | 'or' } };

/**
 * A filterable property: its column and kind (decides how each operator reads and which values it takes). `number`
 * is an integer column.
 */
export interface FilterField {
  column: string;
  kind: 'string' | 'number' | 'boolean' | 'date' | 'array';
  /**
   * A SQL expression of the row, written in code (never from a request), read instead of `column`: a key of a
   * JSON column, or a derived value such as online. Only the string and boolean kinds take one.
   */
  sql?: string;
  /** Values bound to the `?` placeholders of `sql`: where a request names part of it (a JSON key). */
  bindings?: readonly (string | number)[];
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
  if (unstorableFields(parsed, 'filter').length)
    throw new Invalid(['filter'], 'filter holds a NUL or a broken surrogate pair');
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
    // Own properties only: `__proto__` or `constructor` must not find Object.prototype's.
    const field = Object.hasOwn(fields, item.params.name) ? fields[item.params.name] : undefined;
    if (!field) throw new Invalid(['filter'], `cannot filter on ${item.params.name}`);
    const cond = condition(field, item.params.operator, item.params.value);
    const prev = clause;
    // The join as it stands at this item: the closures run after the loop, when `join` holds the last one.
    const joined = join;
    clause = prev
      ? (b) => {
          b.where(prev);
          if (joined === 'and') b.andWhere(cond);
          else b.orWhere(cond);
        }
      : (b) => {
          b.where(cond);
        };
  }
  if (clause) qb.where(clause as never);
  return qb;
}

/** Dates PostgreSQL's timestamptz holds and JavaScript writes back the same way: years 1 to 9999. */
function dateOf(value: unknown): Date | undefined {
  if (typeof value !== 'string' && typeof value !== 'number') return undefined;
  const d = new Date(value);
  const year = d.getUTCFullYear();
  return Number.isNaN(d.getTime()) || year < 1 || year > 9999 ? undefined : d;
}

/** An integer column's value: a safe integer, as a number or a string of digits. */
function integerOf(value: unknown): number | undefined {
  if (typeof value !== 'number' && (typeof value !== 'string' || !/^-?\d{1,15}$/.test(value)))
    return undefined;
  const n = Number(value);
  return Number.isSafeInteger(n) && Math.abs(n) <= 2147483647 ? n : undefined;
}

function booleanOf(value: unknown): boolean | undefined {
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  return undefined;
}

/**
 * One property item as a query condition. Every value is checked against the property's kind here, so nothing the
 * database would refuse (a date that is not one, a boolean that is neither) gets that far: such a filter is 400
 * naming `filter`.
 */
function condition(field: FilterField, op: FilterOperator, value: unknown): (b: Knex.QueryBuilder) => void {
  const col = field.column;
  const bad = () => new Invalid(['filter'], `operator ${op} does not fit this property or value`);
  if (field.sql !== undefined) return expressionCondition(field, op, value, bad);
  switch (op) {
    case 'contains':
      if (typeof value !== 'string') throw bad();
      if (field.kind === 'array') return (b) => void b.whereRaw('?? @> ?::text[]', [col, [value]]);
      if (field.kind !== 'string') throw bad();
      return (b) => void b.whereILike(col, `%${value.replace(/[\\%_]/g, '\\$&')}%`);
    case 'eq':
      switch (field.kind) {
        case 'array':
          if (typeof value !== 'string') throw bad();
          return (b) => void b.whereRaw('?? @> ?::text[]', [col, [value]]);
        case 'string':
          if (typeof value !== 'string' && typeof value !== 'number') throw bad();
          return (b) => void b.where(col, String(value));
        case 'boolean': {
          const v = booleanOf(value);
          if (v === undefined) throw bad();
          return (b) => void b.where(col, v);
        }
        case 'number': {
          const n = integerOf(value);
          if (n === undefined) throw bad();
          return (b) => void b.where(col, n);
        }
        case 'date': {
          const d = dateOf(value);
          if (!d) throw bad();
          return (b) => void b.where(col, d);
        }
      }
      throw bad();
    case 'bool': {
      const v = booleanOf(value);
      if (v === undefined || field.kind !== 'boolean') throw bad();
      return (b) => void b.where(col, v);
    }
    case 'gt':
    case 'lt': {
      const sign = op === 'gt' ? '>' : '<';
      if (field.kind === 'number') {
        const n = integerOf(value);
        if (n === undefined) throw bad();
        return (b) => void b.where(col, sign, n);
      }
      if (field.kind === 'date') {
        const d = dateOf(value);
        if (!d) throw bad();
        return (b) => void b.where(col, sign, d);
      }
      throw bad();
    }
  }
}

/** A property item on a field read through its SQL expression (string and boolean kinds). */
function expressionCondition(
  field: FilterField,
  op: FilterOperator,
  value: unknown,
  bad: () => Invalid,
): (b: Knex.QueryBuilder) => void {
  const sql = `(${field.sql})`;
  const own = field.bindings ?? [];
  if (field.kind === 'string') {
    if (op === 'contains' && typeof value === 'string')
      return (b) => void b.whereRaw(`${sql} ilike ?`, [...own, `%${value.replace(/[\\%_]/g, '\\$&')}%`]);
    if (op === 'eq' && (typeof value === 'string' || typeof value === 'number'))
      return (b) => void b.whereRaw(`${sql} = ?`, [...own, String(value)]);
    throw bad();
  }
  if (field.kind === 'boolean' && (op === 'eq' || op === 'bool')) {
    const v = booleanOf(value);
    if (v === undefined) throw bad();
    return (b) => void b.whereRaw(`${sql} = ?`, [...own, v]);
  }
  throw bad();
}

/** Where nulls go in a list's order: last when descending, first when ascending (the console's way round). */
export function nullsWhere(direction: 'asc' | 'desc'): 'first' | 'last' {
  return direction === 'desc' ? 'last' : 'first';
}

/** A query a page can be taken from: a knex query builder or an objection model query. */
type PageableQuery<Row> = Knex.QueryBuilder | (Row extends Model ? QueryBuilder<Row, Row[]> : never);

/**
 * One page of a query and the number of rows in all pages, for a paged route to return: the
 * router puts the total in `X-Total-Count`. Rows of one sort value keep the store's order; nulls sort last when
 * descending and first when ascending, the way round the console expects.
 */
export async function listPage<Row>(
  qb: PageableQuery<Row>,
  query: { page: number; per_page: number },
  /** A column, or an expression (its own nulls, if any, sort as its SQL says: nullsWhere does not apply). */
  order?: { column: string | Knex.Raw; direction: 'asc' | 'desc' },
  /** The total when the caller keeps it exactly (a kept count), or its read: the query is then not counted. */
  known?: number | Promise<number>,
  /**
   * Reads the page's rows from the ordered, limited query, which it is handed unrun: to read wider rows than the
   * query selects in the same statement, with the page as a subquery. The rows must come back in the page's order.
   */
  read?: <Q extends PageableQuery<Row>>(page: Q) => PromiseLike<Row[]>,
): Promise<Page<Row>> {
  // The count and the page run at the same time (two pool connections where the store has them): a filtered
  // list's count scans every matching row, and the page need not wait for it.
  let counting: Promise<number>;
  if (known !== undefined) counting = Promise.resolve(known);
  else if ('resultSize' in qb) counting = qb.clone().resultSize();
  else {
    const counted = qb.clone().clearSelect().clearOrder().count<{ count: number }[]>({ count: '*' });
    counting = counted.then(([{ count } = { count: 0 }]) => Number(count));
  }
  // One shape for both builders: objection's mirrors knex's for these calls.
  const q = qb as Knex.QueryBuilder;
  if (order) q.orderBy(order.column, order.direction, nullsWhere(order.direction));
  const limited = q.limit(query.per_page).offset((query.page - 1) * query.per_page);
  const paging = read ? read(limited as PageableQuery<Row>) : (limited as Promise<Row[]>);
  const [total, items] = await Promise.all([counting, paging]);
  return { items, total };
}
