import {
  Button,
  Card,
  ConfirmDialog,
  createColumnHelper,
  DataTable,
  Dialog,
  Empty,
  formatDate,
  icons,
  type Role,
  SelectField,
  TextField,
  useAction,
  useApi,
  useCan,
  useFormDialog,
  usePagedList,
  useToast,
  useUser,
} from '@gatehouse/console';
import { useMemo, useState } from 'react';
import { calls } from '../api';
import type { ApiKey, CreatedApiKey } from '../types';
import { grantableRoles, roleLabels } from './roles';
import { SecretShownOnce } from './shown-once';

/** The expiry in days is one of -1 (never), 30, 60, 90 or 365. */
const expiries = [
  { value: '30', label: '30 days' },
  { value: '60', label: '60 days' },
  { value: '90', label: '90 days' },
  { value: '365', label: '1 year' },
  { value: '-1', label: 'Never' },
];

export function expiryText(expiresIn: number, now = Date.now()): { text: string; expired: boolean } {
  if (expiresIn === -1) return { text: 'Never', expired: false };
  const at = expiresIn * 1000;
  return { text: new Date(at).toLocaleDateString(undefined, { dateStyle: 'medium' }), expired: at < now };
}

export function ApiKeysTab() {
  const api = useApi();
  const user = useUser();
  const toast = useToast();
  const can = useCan();
  const mayList = can(calls.listApiKeys, 'see API keys');
  const { list: keys, table: keysTable } = usePagedList(
    (query) =>
      mayList.allowed
        ? api.page<ApiKey>(calls.listApiKeys, {
            query: {
              page: query.page,
              per_page: query.perPage,
              sort_by: query.sortBy,
              order_by: query.order,
            },
          })
        : Promise.resolve({ items: [], total: 0 }),
    [api, user.tenant, mayList.allowed],
    { sortBy: 'expires_in', order: 'desc' },
  );
  const roles = grantableRoles(user.role);
  const [removing, setRemoving] = useState<ApiKey | null>(null);
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const action = useAction();
  const nameProblem = (name: string) =>
    name.trim().length < 3 || name.trim().length > 20 ? 'Use 3 to 20 characters.' : null;
  const creating = useFormDialog({
    action,
    valid: (d) => !nameProblem(d.name),
    send: (d: { name: string; expires: string; role: Role }) =>
      api.call<CreatedApiKey>(calls.createApiKey, {
        body: { name: d.name.trim(), expires_in: Number(d.expires), role: d.role },
        context: 'Could not create the API key',
      }),
    done: (answer) => {
      setCreated(answer);
      keys.reload();
    },
  });
  const editing = useFormDialog({
    action,
    valid: (d) => !nameProblem(d.name),
    send: (d: { name: string; role: Role }, key: ApiKey | null) =>
      api.call(calls.updateApiKey, {
        params: { key: key?.name ?? '' },
        body: { name: d.name.trim(), role: d.role },
        context: 'Could not save the API key',
      }),
    done: () => {
      toast('API key saved');
      keys.reload();
    },
  });

  const column = createColumnHelper<ApiKey>();
  const columns = useMemo(
    () => [
      column.accessor('name', { header: 'Name', cell: (ctx) => <strong>{ctx.getValue()}</strong> }),
      column.accessor('role', {
        header: 'Role',
        enableSorting: false,
        cell: (ctx) => roleLabels[ctx.getValue()] ?? ctx.getValue(),
      }),
      column.accessor('expires_in', {
        header: 'Expires',
        cell: (ctx) => {
          const e = expiryText(ctx.getValue());
          return e.expired ? <span className="badge badge-danger">Expired {e.text}</span> : e.text;
        },
      }),
      column.accessor('created_at', { header: 'Created', cell: (ctx) => formatDate(ctx.getValue()) }),
      column.display({
        id: 'actions',
        header: () => <span className="sr-only">Actions</span>,
        cell: (ctx) => (
          <div className="row" style={{ justifyContent: 'flex-end', gap: 6, flexWrap: 'nowrap' }}>
            <Button
              size="sm"
              variant="ghost"
              aria-label={`Edit ${ctx.row.original.name}`}
              {...can(calls.updateApiKey, 'edit API keys').gate}
              onClick={() =>
                editing.open({ name: ctx.row.original.name, role: ctx.row.original.role }, ctx.row.original)
              }
            >
              Edit
            </Button>
            <Button
              size="sm"
              variant="ghost"
              aria-label={`Delete ${ctx.row.original.name}`}
              {...can(calls.deleteApiKey, 'delete API keys').gate}
              onClick={() => {
                action.clearError();
                setRemoving(ctx.row.original);
              }}
            >
              Delete
            </Button>
          </div>
        ),
      }),
    ],
    [can],
  );

  return (
    <div className="stack">
      <Card
        title="API keys"
        actions={
          <Button
            variant="primary"
            size="sm"
            {...can(calls.createApiKey, 'create API keys').gate}
            onClick={() =>
              creating.open({
                name: '',
                expires: '30',
                role: roles.includes('operator') ? 'operator' : (roles[0] ?? 'observer'),
              })
            }
          >
            {icons.plus} Create API key
          </Button>
        }
      >
        <DataTable
          label="API keys"
          columns={columns}
          {...keysTable}
          rowKey={(k) => k.name}
          empty={
            <Empty title={mayList.allowed ? 'No API keys' : mayList.reason} icon={icons.key}>
              An API key lets scripts call the Gatehouse API for this namespace with the X-API-Key header.
            </Empty>
          }
        />
      </Card>
      <Dialog {...creating.dialog} title="Create an API key" submitLabel="Create key">
        {creating.draft ? (
          <>
            <TextField
              label="Name"
              value={creating.draft.name}
              onChange={(e) => creating.change({ name: e.target.value })}
              hint="3 to 20 characters, unique in this namespace."
              error={creating.draft.name ? nameProblem(creating.draft.name) : null}
              autoFocus
              required
            />
            <SelectField
              label="Expires after"
              value={creating.draft.expires}
              onChange={(e) => creating.change({ expires: e.target.value })}
              options={expiries}
            />
            <SelectField
              label="Role"
              value={creating.draft.role}
              onChange={(e) => creating.change({ role: e.target.value as Role })}
              options={roles.map((r) => ({ value: r, label: roleLabels[r] }))}
              hint="A key can never have more rights than you."
            />
          </>
        ) : null}
      </Dialog>
      <SecretShownOnce
        open={Boolean(created)}
        title="API key created"
        label="API key"
        secret={created?.id}
        why="It is shown only once. Store it somewhere safe."
        onClose={() => setCreated(null)}
      />
      <Dialog {...editing.dialog} title={`Edit ${editing.subject?.name ?? ''}`}>
        {editing.draft ? (
          <>
            <TextField
              label="Name"
              value={editing.draft.name}
              onChange={(e) => editing.change({ name: e.target.value })}
              error={nameProblem(editing.draft.name)}
              autoFocus
            />
            <SelectField
              label="Role"
              value={editing.draft.role}
              onChange={(e) => editing.change({ role: e.target.value as Role })}
              options={roles.map((r) => ({ value: r, label: roleLabels[r] }))}
            />
          </>
        ) : null}
      </Dialog>
      <ConfirmDialog
        subject={removing}
        title={(key) => `Delete ${key.name}?`}
        description="Scripts using this key will stop working at once."
        action={action}
        onConfirm={(key) =>
          api.call(calls.deleteApiKey, { params: { key: key.name }, context: 'Could not delete the API key' })
        }
        onDone={() => {
          toast('API key deleted');
          keys.reload();
        }}
        onClose={() => setRemoving(null)}
      />
    </div>
  );
}
