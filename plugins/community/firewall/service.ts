import { randomBytes } from 'node:crypto';
import { Conflict, Invalid, NotAcceptable, NotFound, TenantStore } from '@gatehouse/core';
import type { Knex } from 'knex';
import { type DeviceFilter, filterColumns, filterOf } from '../gateway/device-filter';
import { isValidPattern, PatternCache } from '../gateway/pattern';
import { TagFilterTable } from '../tags/filter-tables';
import { type Attempt, evaluate, type RuleRow, type Verdict } from './evaluate';

export interface FirewallRule {
  id: string;
  tenant_id: string;
  action: 'allow' | 'deny';
  active: boolean;
  filter: DeviceFilter;
  priority: number;
  source_ip: string;
  username: string;
}

export interface RuleFields {
  action?: 'allow' | 'deny';
  active?: boolean;
  filter?: DeviceFilter;
  priority?: number;
  source_ip?: string;
  username?: string;
}

function present(row: RuleRow): FirewallRule {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    action: row.action,
    active: row.active,
    filter: filterOf(row),
    priority: row.priority,
    source_ip: row.source_ip,
    username: row.username,
  };
}

/**
 * The columns a create or update writes, each named: whatever else a caller's object carries (a `tenant_id`, an
 * `id`, a `created_at`) is never written, so no body can move a rule to another namespace or rename it (issue 11).
 */
function columns(fields: RuleFields): Partial<RuleRow> {
  const bad = (['source_ip', 'username'] as const).filter(
    (f) => fields[f] !== undefined && !isValidPattern(fields[f] as string),
  );
  if (bad.length) throw new Invalid(bad, 'not a valid regular expression');
  const row: Partial<RuleRow> = {};
  if (fields.action !== undefined) row.action = fields.action;
  if (fields.active !== undefined) row.active = fields.active;
  if (fields.priority !== undefined) row.priority = fields.priority;
  if (fields.source_ip !== undefined) row.source_ip = fields.source_ip;
  if (fields.username !== undefined) row.username = fields.username;
  return { ...row, ...(fields.filter ? filterColumns(fields.filter) : {}) };
}

/** Firewall rules of a namespace and their evaluation on each gateway connection (SPEC.md section 7). */
export class FirewallService {
  private readonly db: Knex;
  private readonly patterns = new PatternCache();
  /** Namespace-wide tag renames and deletes reach rule filters through this (see tags/holders.ts). */
  readonly tagFilters = new TagFilterTable('firewall_rules', (row) => `firewall rule ${row.id}`);

  constructor(deps: { db: Knex }) {
    this.db = deps.db;
  }

  private store(tenantId: string): TenantStore {
    return new TenantStore(this.db, tenantId);
  }

  async list(
    tenantId: string,
    page: { page: number; per_page: number },
  ): Promise<{ items: FirewallRule[]; total: number }> {
    const q = this.store(tenantId).table<RuleRow>('firewall_rules');
    const [{ count } = { count: 0 }] = (await q.clone().count({ count: '*' })) as { count: number }[];
    const rows = (await q
      .orderBy([
        { column: 'priority', order: 'asc' },
        { column: 'created_at', order: 'asc' },
      ])
      .limit(page.per_page)
      .offset((page.page - 1) * page.per_page)) as RuleRow[];
    return { items: rows.map(present), total: Number(count) };
  }

  private async row(store: TenantStore, id: string): Promise<RuleRow> {
    const row = (await store.table<RuleRow>('firewall_rules').where({ id }).first()) as RuleRow | undefined;
    if (!row) throw new NotFound('firewall rule');
    return row;
  }

  async get(tenantId: string, id: string): Promise<FirewallRule> {
    return present(await this.row(this.store(tenantId), id));
  }

  async create(
    tenantId: string,
    fields: Required<Omit<RuleFields, 'active'>> & RuleFields,
  ): Promise<FirewallRule> {
    const id = randomBytes(12).toString('hex');
    const [row] = (await this.store(tenantId)
      .insert('firewall_rules', { id, active: true, ...columns(fields) })
      .returning('*')) as RuleRow[];
    return present(row as RuleRow);
  }

  async update(tenantId: string, id: string, fields: RuleFields): Promise<FirewallRule> {
    const store = this.store(tenantId);
    await this.row(store, id);
    const changes = columns(fields);
    if (Object.keys(changes).length) await store.table('firewall_rules').where({ id }).update(changes);
    return present(await this.row(store, id));
  }

  async remove(tenantId: string, id: string): Promise<FirewallRule> {
    const store = this.store(tenantId);
    const row = await this.row(store, id);
    await store.table('firewall_rules').where({ id }).delete();
    return present(row);
  }

  async addTag(tenantId: string, id: string, tag: string): Promise<FirewallRule> {
    const row = await this.row(this.store(tenantId), id);
    const tags = row.filter_tags ?? [];
    if (tags.includes(tag)) throw new Conflict(['tag']);
    if (tags.length >= 3) throw new NotAcceptable('a firewall rule has at most 3 tags');
    return this.update(tenantId, id, { filter: { tags: [...tags, tag] } });
  }

  setTags(tenantId: string, id: string, tags: string[]): Promise<FirewallRule> {
    return this.update(tenantId, id, { filter: { tags } });
  }

  async removeTag(tenantId: string, id: string, tag: string): Promise<FirewallRule> {
    const row = await this.row(this.store(tenantId), id);
    const tags = row.filter_tags ?? [];
    if (!tags.includes(tag)) throw new NotFound('tag');
    if (tags.length === 1) throw new NotAcceptable('a tag filter keeps at least one tag');
    return this.update(tenantId, id, { filter: { tags: tags.filter((t) => t !== tag) } });
  }

  /** The verdict for one connection, over the namespace's rules as they are now. */
  async check(tenantId: string, attempt: Attempt): Promise<Verdict> {
    const rules = (await this.store(tenantId)
      .table<RuleRow>('firewall_rules')
      .where({ active: true })
      .orderBy([
        { column: 'priority', order: 'asc' },
        { column: 'created_at', order: 'asc' },
      ])) as RuleRow[];
    return evaluate(rules, attempt, this.patterns);
  }
}
