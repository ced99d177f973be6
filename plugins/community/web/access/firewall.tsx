import {
  Alert,
  Button,
  Card,
  ConfirmDialog,
  createColumnHelper,
  DataTable,
  Dialog,
  Empty,
  icons,
  PageHeader,
  SelectField,
  Switch,
  TextField,
  useApi,
  useCan,
  useFormDialog,
  usePagedList,
  useToast,
  useUser,
} from '@gatehouse/console';
import { useMemo, useState } from 'react';
import { calls } from '../api';
import type { FirewallRule } from '../types';
import {
  describeFilter,
  draftFromFilter,
  emptyFilter,
  type FilterDraft,
  FilterFields,
  filterFromDraft,
  filterProblem,
} from './filter-fields';

const column = createColumnHelper<FirewallRule>();

interface Draft {
  action: 'allow' | 'deny';
  active: boolean;
  priority: string;
  source_ip: string;
  username: string;
  filter: FilterDraft;
  /** Ticked by the person when the rule refuses every connection; saving needs it then. */
  confirmed: boolean;
}

// A new rule starts as an allow: a form saved unchanged must never shut everyone out of the namespace.
const blank: Draft = {
  action: 'allow',
  active: true,
  priority: '10',
  source_ip: '.*',
  username: '.*',
  filter: emptyFilter,
  confirmed: false,
};

/** Patterns that match every address or user (an empty field is saved as `.*`). */
const anything = new Set(['', '.*', '^.*', '.*$', '^.*$']);

/** Active, deny, and matching every source, user and device: no connection gets past it. */
export function refusesEverything(d: Draft): boolean {
  return (
    d.active &&
    d.action === 'deny' &&
    anything.has(d.source_ip.trim()) &&
    anything.has(d.username.trim()) &&
    d.filter.mode === 'all'
  );
}

/** What the rule will match, in words: "Denies SSH from any address as any user to every device." */
export function describeRule(d: Draft): string {
  const source = d.source_ip.trim();
  const username = d.username.trim();
  const devices =
    d.filter.mode === 'all'
      ? 'to every device'
      : d.filter.mode === 'hostname'
        ? `to devices whose name matches ${d.filter.hostname.trim() || '…'}`
        : `to devices tagged ${d.filter.tags.trim() || '…'}`;
  const text = [
    d.action === 'allow' ? 'Allows' : 'Denies',
    'SSH and web terminal connections',
    anything.has(source) ? 'from any address' : `from addresses matching ${source}`,
    anything.has(username) ? 'as any user' : `as users matching ${username}`,
    devices,
  ].join(' ');
  return d.active ? `${text}.` : `${text}, once switched on; inactive, it decides nothing.`;
}

/** The next free step of ten after the highest priority there is, so a new rule goes after the existing ones. */
function nextPriority(rules: FirewallRule[]): string {
  const highest = Math.max(0, ...rules.map((r) => r.priority));
  return String(Math.min(2147483647, (Math.floor(highest / 10) + 1) * 10));
}

function pattern(value: string, any: string) {
  return value === '.*' ? <span className="muted">{any}</span> : <code>{value}</code>;
}

export function FirewallPage() {
  const api = useApi();
  const user = useUser();
  const toast = useToast();
  const can = useCan();
  const { list: rules, table: rulesTable } = usePagedList(
    (query) =>
      api.page<FirewallRule>(calls.listFirewallRules, {
        query: { page: query.page, per_page: query.perPage },
      }),
    [api, user.tenant],
  );
  const [removing, setRemoving] = useState<FirewallRule | null>(null);
  const priorityProblem = (d: Draft) => {
    const priority = Number(d.priority);
    return Number.isInteger(priority) && priority >= 0 ? null : 'Use a whole number, 0 or more.';
  };
  const form = useFormDialog({
    valid: (d) => !priorityProblem(d) && !filterProblem(d.filter) && (d.confirmed || !refusesEverything(d)),
    send: (d: Draft, rule: FirewallRule | null) => {
      const body = {
        action: d.action,
        active: d.active,
        priority: Number(d.priority),
        source_ip: d.source_ip.trim() || '.*',
        username: d.username.trim() || '.*',
        filter: filterFromDraft(d.filter),
      };
      return rule
        ? api.call(calls.updateFirewallRule, {
            params: { id: rule.id },
            body,
            context: 'Could not save the rule',
          })
        : api.call(calls.createFirewallRule, { body, context: 'Could not create the rule' });
    },
    done: (_answer, _draft, rule) => {
      toast(rule ? 'Rule saved' : 'Rule created');
      rules.reload();
    },
  });
  const action = form.action;
  const open = async (rule: FirewallRule | null) => {
    if (rule) {
      form.open(
        {
          action: rule.action,
          active: rule.active,
          priority: String(rule.priority),
          source_ip: rule.source_ip,
          username: rule.username,
          filter: draftFromFilter(rule.filter),
          confirmed: false,
        },
        rule,
      );
      return;
    }
    // The list is by priority, so the last page of 100 holds the highest; the page shown stands in if that fails.
    let known = rules.data?.items ?? [];
    try {
      const last = Math.max(1, Math.ceil((rules.data?.total ?? 0) / 100));
      known = (
        await api.page<FirewallRule>(calls.listFirewallRules, { query: { page: last, per_page: 100 } })
      ).items;
    } catch {
      // Keep the page shown.
    }
    form.open({ ...blank, priority: nextPriority(known) }, null);
  };

  const columns = useMemo(
    () => [
      column.accessor('priority', { header: 'Priority' }),
      column.accessor('action', {
        header: 'Action',
        cell: (ctx) => (
          <span className={`badge ${ctx.getValue() === 'allow' ? 'badge-ok' : 'badge-danger'}`}>
            {ctx.getValue() === 'allow' ? 'Allow' : 'Deny'}
          </span>
        ),
      }),
      column.accessor('source_ip', {
        header: 'Source IP',
        cell: (ctx) => pattern(ctx.getValue(), 'Any address'),
      }),
      column.accessor('username', {
        header: 'Device user',
        cell: (ctx) => pattern(ctx.getValue(), 'Any user'),
      }),
      column.accessor('filter', { header: 'Devices', cell: (ctx) => describeFilter(ctx.getValue()) }),
      column.accessor('active', {
        header: 'Status',
        cell: (ctx) =>
          ctx.getValue() ? (
            <span className="badge badge-ok">Active</span>
          ) : (
            <span className="badge">Inactive</span>
          ),
      }),
      column.display({
        id: 'actions',
        header: () => <span className="sr-only">Actions</span>,
        cell: (ctx) => (
          <div className="row" style={{ justifyContent: 'flex-end', gap: 6, flexWrap: 'nowrap' }}>
            <Button
              size="sm"
              variant="ghost"
              {...can(calls.updateFirewallRule, 'edit firewall rules').gate}
              onClick={() => open(ctx.row.original)}
              aria-label={`Edit rule with priority ${ctx.row.original.priority}`}
            >
              Edit
            </Button>
            <Button
              size="sm"
              variant="ghost"
              {...can(calls.deleteFirewallRule, 'delete firewall rules').gate}
              onClick={() => setRemoving(ctx.row.original)}
              aria-label={`Delete rule with priority ${ctx.row.original.priority}`}
            >
              Delete
            </Button>
          </div>
        ),
      }),
    ],
    [can],
  );

  const draft = form.draft;

  return (
    <>
      <PageHeader
        title="Firewall rules"
        description="Checked before every connection: active rules by priority, lowest first; the first match decides."
        actions={
          <Button
            variant="primary"
            {...can(calls.createFirewallRule, 'add firewall rules').gate}
            onClick={() => open(null)}
          >
            {icons.plus} Add rule
          </Button>
        }
      />
      <Card>
        <DataTable
          label="Firewall rules"
          columns={columns}
          {...rulesTable}
          rowKey={(r) => r.id}
          empty={
            <Empty
              title="No firewall rules"
              icon={icons.shield}
              action={
                <Button
                  {...can(calls.createFirewallRule, 'add firewall rules').gate}
                  onClick={() => open(null)}
                >
                  Add rule
                </Button>
              }
            >
              Without rules every connection that signs in is allowed.
            </Empty>
          }
        />
      </Card>
      <Dialog
        {...form.dialog}
        title={form.subject ? 'Edit rule' : 'Add a firewall rule'}
        submitLabel={form.subject ? 'Save' : 'Add rule'}
      >
        {draft ? (
          <>
            <div className="grid-2">
              <SelectField
                label="Action"
                value={draft.action}
                onChange={(e) => form.change({ action: e.target.value as Draft['action'] })}
                options={[
                  { value: 'allow', label: 'Allow' },
                  { value: 'deny', label: 'Deny' },
                ]}
              />
              <TextField
                label="Priority"
                type="number"
                min={0}
                value={draft.priority}
                onChange={(e) => form.change({ priority: e.target.value })}
                error={form.touched ? priorityProblem(draft) : null}
              />
            </div>
            <TextField
              label="Source IP pattern"
              value={draft.source_ip}
              onChange={(e) => form.change({ source_ip: e.target.value })}
              hint="A regular expression; .* matches any address."
            />
            <TextField
              label="Device user pattern"
              value={draft.username}
              onChange={(e) => form.change({ username: e.target.value })}
              hint="A regular expression; .* matches any user."
            />
            <FilterFields
              draft={draft.filter}
              onChange={(filter) => form.change({ filter })}
              showErrors={form.touched}
            />
            <Switch label="Active" checked={draft.active} onChange={(active) => form.change({ active })} />
            <p data-testid="rule-summary" aria-live="polite">
              {describeRule(draft)}
            </p>
            {refusesEverything(draft) ? (
              <Alert kind="warn" title="This rule refuses every connection">
                <p>
                  Nobody will reach any device of this namespace over SSH or the web terminal, unless a rule
                  with a lower priority number allows them first.
                </p>
                <div className="field">
                  <label className="row" style={{ gap: 6 }}>
                    <input
                      type="checkbox"
                      checked={draft.confirmed}
                      onChange={(e) => form.change({ confirmed: e.target.checked })}
                    />
                    I understand: refuse every connection
                  </label>
                  {form.touched && !draft.confirmed ? (
                    <span className="error" role="alert">
                      Tick the box to save a rule that refuses every connection, or narrow the rule.
                    </span>
                  ) : null}
                </div>
              </Alert>
            ) : null}
          </>
        ) : null}
      </Dialog>
      <ConfirmDialog
        subject={removing}
        title="Delete this rule?"
        description="Connections it matched will be decided by the next rule, or allowed when none matches."
        action={action}
        onConfirm={(rule) =>
          api.call(calls.deleteFirewallRule, {
            params: { id: rule.id },
            context: 'Could not delete the rule',
          })
        }
        onDone={() => {
          toast('Rule deleted');
          rules.reload();
        }}
        onClose={() => setRemoving(null)}
      />
    </>
  );
}
