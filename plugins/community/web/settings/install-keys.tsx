import {
  Alert,
  Button,
  Card,
  ConfirmDialog,
  createColumnHelper,
  DataTable,
  Dialog,
  Empty,
  ErrorState,
  formatDate,
  icons,
  Loading,
  SelectField,
  Switch,
  TextField,
  useAction,
  useApi,
  useCan,
  useFormDialog,
  usePagedList,
  useResource,
  useToast,
  useUser,
} from '@gatehouse/console';
import { type ReactNode, useMemo, useState } from 'react';
import { calls } from '../api';
import { InstallCommandLines } from '../devices/install';
import type { InstallKey, InstallKeyWithKey, Namespace } from '../types';
import { SecretShownOnce } from './shown-once';

/** How long a new key admits devices; the server takes an instant (expires_at), or none. */
const lifetimes = [
  { value: '1', label: '1 day' },
  { value: '7', label: '7 days' },
  { value: '30', label: '30 days' },
  { value: '90', label: '90 days' },
  { value: '-1', label: 'Never' },
];

const DAY_MS = 86_400_000;

export function expiresAt(days: number, now = Date.now()): string | null {
  return days < 0 ? null : new Date(now + days * DAY_MS).toISOString();
}

function usesText(key: InstallKey): string {
  return key.usage_limit > 0 ? `${key.used_times} of ${key.usage_limit}` : `${key.used_times}`;
}

function expiry(at: string | null): ReactNode {
  if (!at) return 'Never';
  const text = new Date(at).toLocaleDateString(undefined, { dateStyle: 'medium' });
  return new Date(at).getTime() <= Date.now() ? (
    <span className="badge badge-danger">Expired {text}</span>
  ) : (
    text
  );
}

/**
 * A namespace's install keys: whether a new device needs one to register, and the keys themselves (made, rotated
 * and revoked by administrators and owners; each key is shown once).
 */
export function InstallKeysTab() {
  const api = useApi();
  const user = useUser();
  const toast = useToast();
  const can = useCan();
  const mayList = can(calls.listInstallKeys, 'see install keys');
  const canManage = mayList.allowed;
  const mayRequire = can(calls.updateNamespace, 'change how devices register');
  const namespace = useResource(
    () =>
      api.call<Namespace>(calls.getNamespace, {
        params: { tenant: user.tenant },
        context: 'Could not load the namespace',
      }),
    [api, user.tenant],
  );
  const { list: keys, table: keysTable } = usePagedList(
    (query) =>
      canManage
        ? api.page<InstallKey>(calls.listInstallKeys, {
            query: {
              page: query.page,
              per_page: query.perPage,
              sort_by: query.sortBy,
              order_by: query.order,
            },
          })
        : Promise.resolve({ items: [], total: 0 }),
    [api, user.tenant, canManage],
    { sortBy: 'created_at', order: 'desc' },
  );
  const [made, setMade] = useState<InstallKeyWithKey | null>(null);
  const [rotating, setRotating] = useState<InstallKey | null>(null);
  const [revoking, setRevoking] = useState<InstallKey | null>(null);
  const action = useAction();
  const requirement = useAction();
  const nameProblem = (name: string) =>
    /^[A-Za-z0-9_.-]{3,20}$/.test(name.trim())
      ? null
      : 'Use 3 to 20 letters, digits, dots, hyphens or underscores.';
  const limitProblem = (limit: string) =>
    /^\d{1,7}$/.test(limit.trim()) && Number(limit) <= 1_000_000 ? null : 'A whole number from 0 to 1000000.';
  const creating = useFormDialog({
    action,
    valid: (d) => !nameProblem(d.name) && !limitProblem(d.limit),
    send: (d: { name: string; days: string; limit: string }) =>
      api.call<InstallKeyWithKey>(calls.createInstallKey, {
        body: { name: d.name.trim(), expires_at: expiresAt(Number(d.days)), usage_limit: Number(d.limit) },
        context: 'Could not create the install key',
      }),
    done: (answer) => {
      setMade(answer);
      keys.reload();
    },
  });

  const column = createColumnHelper<InstallKey>();
  const columns = useMemo(
    () => [
      column.accessor('name', { header: 'Name', cell: (ctx) => <strong>{ctx.getValue()}</strong> }),
      column.accessor('key_hint', {
        header: 'Key',
        enableSorting: false,
        cell: (ctx) => <code>{ctx.getValue()}_…</code>,
      }),
      column.accessor('used_times', { header: 'Devices', cell: (ctx) => usesText(ctx.row.original) }),
      column.accessor('expires_at', { header: 'Expires', cell: (ctx) => expiry(ctx.getValue()) }),
      column.accessor('last_used_at', {
        header: 'Last used',
        cell: (ctx) => (ctx.getValue() ? formatDate(ctx.getValue() as string) : 'Never'),
      }),
      column.display({
        id: 'actions',
        header: () => <span className="sr-only">Actions</span>,
        cell: (ctx) => (
          <div className="row" style={{ justifyContent: 'flex-end', gap: 6, flexWrap: 'nowrap' }}>
            <Button
              size="sm"
              variant="ghost"
              aria-label={`Rotate ${ctx.row.original.name}`}
              {...can(calls.rotateInstallKey, 'rotate install keys').gate}
              onClick={() => {
                action.clearError();
                setRotating(ctx.row.original);
              }}
            >
              Rotate
            </Button>
            <Button
              size="sm"
              variant="ghost"
              aria-label={`Revoke ${ctx.row.original.name}`}
              {...can(calls.revokeInstallKey, 'revoke install keys').gate}
              onClick={() => {
                action.clearError();
                setRevoking(ctx.row.original);
              }}
            >
              Revoke
            </Button>
          </div>
        ),
      }),
    ],
    [can],
  );

  if (namespace.error) return <ErrorState message={namespace.error} onRetry={namespace.reload} />;
  if (!namespace.data) return <Loading />;
  const ns = namespace.data;
  const required = ns.settings?.require_install_key === true;

  const setRequired = async (on: boolean) => {
    const ok = await requirement.run(() =>
      api.call(calls.updateNamespace, {
        params: { tenant: ns.tenant_id },
        body: { settings: { require_install_key: on } },
        context: 'Could not change the registration setting',
      }),
    );
    if (ok) {
      toast(on ? 'New devices now need an install key' : 'New devices register with the tenant ID');
      namespace.reload();
    }
  };

  return (
    <div className="stack">
      <Card title="Registration">
        <div className="card-body stack" style={{ gap: 10 }}>
          {requirement.error ? <Alert>{requirement.error}</Alert> : null}
          <Switch
            label="Require an install key to register a new device"
            checked={required}
            onChange={setRequired}
            disabled={!mayRequire.allowed || requirement.pending}
            title={mayRequire.reason || undefined}
          />
          <p className="muted" style={{ maxWidth: 640 }}>
            The tenant ID is in every install command, so anyone who has seen one can make devices wait in
            Pending. With this on, a new device registers only with one of the keys below; devices already
            registered stay as they are.
          </p>
          {required && canManage && keys.data?.total === 0 ? (
            <Alert kind="warn" title="No install key yet">
              No new device can register until you create one.
            </Alert>
          ) : null}
        </div>
      </Card>
      <Card
        title="Install keys"
        actions={
          <Button
            variant="primary"
            size="sm"
            {...can(calls.createInstallKey, 'create install keys').gate}
            onClick={() => creating.open({ name: '', days: '7', limit: '0' })}
          >
            {icons.plus} Create install key
          </Button>
        }
      >
        {canManage ? (
          <DataTable
            label="Install keys"
            columns={columns}
            {...keysTable}
            rowKey={(k) => k.id}
            empty={
              <Empty title="No install keys" icon={icons.key}>
                An install key lets an agent register a new device with more than the tenant ID. Devices that
                register with one are not held to the limits of registrations from one address.
              </Empty>
            }
          />
        ) : (
          <div className="card-body">
            <p className="muted">{mayList.reason}.</p>
          </div>
        )}
      </Card>
      <Dialog {...creating.dialog} title="Create an install key" submitLabel="Create key">
        {creating.draft ? (
          <>
            <TextField
              label="Name"
              value={creating.draft.name}
              onChange={(e) => creating.change({ name: e.target.value })}
              hint="3 to 20 characters, unique in this namespace: say where the key is used."
              error={creating.draft.name ? nameProblem(creating.draft.name) : null}
              autoFocus
              required
            />
            <SelectField
              label="Expires after"
              value={creating.draft.days}
              onChange={(e) => creating.change({ days: e.target.value })}
              options={lifetimes}
            />
            <TextField
              label="Devices it may register"
              inputMode="numeric"
              value={creating.draft.limit}
              onChange={(e) => creating.change({ limit: e.target.value })}
              hint="0 for no limit. Devices already registered with it stay when it expires or is used up."
              error={limitProblem(creating.draft.limit)}
            />
          </>
        ) : null}
      </Dialog>
      <SecretShownOnce
        open={Boolean(made)}
        title={`Install key ${made?.name ?? ''}`}
        label="install key"
        secret={made?.key}
        why="It is shown only once: Gatehouse keeps only a digest of it."
        onClose={() => setMade(null)}
      >
        {made?.key ? <InstallCommandLines tenant={ns.tenant_id} installKey={made.key} /> : null}
      </SecretShownOnce>
      <ConfirmDialog
        subject={rotating}
        title={(key) => `Rotate ${key.name}?`}
        description="The key in use now stops registering new devices at once; the devices it registered stay. You see the new key once."
        confirmLabel="Rotate"
        action={action}
        onConfirm={async (key) => {
          setMade(
            await api.call<InstallKeyWithKey>(calls.rotateInstallKey, {
              params: { id: key.id },
              context: 'Could not rotate the install key',
            }),
          );
        }}
        onDone={() => keys.reload()}
        onClose={() => setRotating(null)}
      />
      <ConfirmDialog
        subject={revoking}
        title={(key) => `Revoke ${key.name}?`}
        description="It stops registering new devices at once; the devices it registered stay."
        confirmLabel="Revoke"
        action={action}
        onConfirm={(key) =>
          api.call(calls.revokeInstallKey, {
            params: { id: key.id },
            context: 'Could not revoke the install key',
          })
        }
        onDone={() => {
          toast('Install key revoked');
          keys.reload();
        }}
        onClose={() => setRevoking(null)}
      />
    </div>
  );
}
