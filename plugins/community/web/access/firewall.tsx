import {
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
}

const blank: Draft = {
  action: 'deny',
  active: true,
  priority: '1',
  source_ip: '.*',
  username: '.*',
  filter: emptyFilter,
};

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
    valid: (d) => !priorityProblem(d) && !filterProblem(d.filter),
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
  const open = (rule: FirewallRule | null) =>
    form.open(
      rule
        ? {
            action: rule.action,
            active: rule.active,
            priority: String(rule.priority),
            source_ip: rule.source_ip,
            username: rule.username,
            filter: draftFromFilter(rule.filter),
          }
        : blank,
      rule,
    );

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
