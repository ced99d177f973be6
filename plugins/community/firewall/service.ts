import { randomBytes } from 'node:crypto';
import {
  Conflict,
  Invalid,
  listPage,
  NotAcceptable,
  NotFound,
  type Page,
  TenantStore,
} from '@gatehouse/core';
import type { Knex } from 'knex';
import { filterColumns, filterOf } from '../matching/device-filter';
import { isValidPattern, PatternCache } from '../matching/pattern';
import { TagFilterTable } from '../tags/filter-tables';
import { type Attempt, evaluate, type RuleRow, type Verdict } from './evaluate';
import { FirewallRule } from './model';
import type { FirewallRuleView, RuleFields } from './schemas';

function present(row: RuleRow): FirewallRuleView {
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
 * `id`, a `created_at`) is never written, so no body can move a rule to another namespace or rename it.
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

/** Rule order: priority, then age. */
const ruleOrder = [
  { column: 'priority', order: 'asc' as const },
  { column: 'created_at', order: 'asc' as const },
];

/** The firewall rules of the caller's namespace (request scope): the firewall rule calls. */
export class FirewallRuleService {
  private readonly tenant: TenantStore;

  constructor(deps: { tenant: TenantStore }) {
    this.tenant = deps.tenant;
  }

  private rules() {
    return this.tenant.query(FirewallRule);
  }

  async list(page: { page: number; per_page: number }): Promise<Page<FirewallRuleView>> {
    const found = await listPage(this.rules().orderBy(ruleOrder), page);
    return { items: found.items.map(present), total: found.total };
  }

  private async row(id: string): Promise<FirewallRule> {
    const row = await this.rules().findById(id);
    if (!row) throw new NotFound('firewall rule');
    return row;
  }

  async get(id: string): Promise<FirewallRuleView> {
    return present(await this.row(id));
  }

  async create(fields: Required<Omit<RuleFields, 'active'>> & RuleFields): Promise<FirewallRuleView> {
    const id = randomBytes(12).toString('hex');
    const row = await this.rules()
      .insert({ id, active: true, ...columns(fields) })
      .returning('*');
    return present(row);
  }

  async update(id: string, fields: RuleFields): Promise<FirewallRuleView> {
    await this.row(id);
    const changes = columns(fields);
    if (Object.keys(changes).length) await this.rules().findById(id).patch(changes);
    return present(await this.row(id));
  }

  async remove(id: string): Promise<FirewallRuleView> {
    const row = await this.row(id);
    await this.rules().deleteById(id);
    return present(row);
  }

  async addTag(id: string, tag: string): Promise<FirewallRuleView> {
    const row = await this.row(id);
    const tags = row.filter_tags ?? [];
    if (tags.includes(tag)) throw new Conflict(['tag']);
    if (tags.length >= 3) throw new NotAcceptable('a firewall rule has at most 3 tags');
    return this.update(id, { filter: { tags: [...tags, tag] } });
  }

  setTags(id: string, tags: string[]): Promise<FirewallRuleView> {
    return this.update(id, { filter: { tags } });
  }

  async removeTag(id: string, tag: string): Promise<FirewallRuleView> {
    const row = await this.row(id);
    const tags = row.filter_tags ?? [];
    if (!tags.includes(tag)) throw new NotFound('tag');
    if (tags.length === 1) throw new NotAcceptable('a tag filter keeps at least one tag');
    return this.update(id, { filter: { tags: tags.filter((t) => t !== tag) } });
  }
}

/**
 * The firewall as the SSH gateway meets it: the verdict for one connection over a namespace's rules, and the rule
 * filters namespace-wide tag renames reach (tags/holders.ts). The gateway has established the tenant (the device's).
 */
export class FirewallService {
  private readonly db: Knex;
  private readonly patterns = new PatternCache();
  /** Namespace-wide tag renames and deletes reach rule filters through this (see tags/holders.ts). */
  readonly tagFilters = new TagFilterTable(FirewallRule, (row) => `firewall rule ${row.id}`);

  constructor(deps: { db: Knex }) {
    this.db = deps.db;
  }

  /** The verdict for one connection, over the namespace's rules as they are now. */
  async check(tenantId: string, attempt: Attempt): Promise<Verdict> {
    const rules = await new TenantStore(this.db, tenantId)
      .query(FirewallRule)
      .where({ active: true })
      .orderBy(ruleOrder);
    return evaluate(rules, attempt, this.patterns);
  }
}
