import {
  Button,
  Card,
  createColumnHelper,
  DataTable,
  Dialog,
  Empty,
  icons,
  PageHeader,
  Switch,
  TextField,
  useAction,
  useApi,
  useResource,
  useTableQuery,
  useToast,
  useUser,
} from '@gatehouse/web/shell';
import { useMemo, useState } from 'react';

interface Connector {
  uid: string;
  tenant_id: string;
  enable: boolean;
  address: string;
  port: number;
  secure: boolean;
  status?: { State?: string; Message?: string };
}

export function ConnectorsPage() {
  const api = useApi();
  const user = useUser();
  const toast = useToast();
  const [query, setQuery] = useTableQuery();
  const connectors = useResource(
    () => api.page<Connector>('listConnectors', { query: { page: query.page, per_page: query.perPage } }),
    [api, query.page, query.perPage, user.tenant],
  );
  const [form, setForm] = useState<{
    address: string;
    port: string;
    secure: boolean;
    enable: boolean;
  } | null>(null);
  const [removing, setRemoving] = useState<Connector | null>(null);
  const action = useAction();
  const column = createColumnHelper<Connector>();
  const columns = useMemo(
    () => [
      column.display({
        id: 'address',
        header: 'Engine',
        cell: (ctx) => <code>{`${ctx.row.original.address}:${ctx.row.original.port}`}</code>,
      }),
      column.accessor('secure', { header: 'TLS', cell: (ctx) => (ctx.getValue() ? 'Yes' : 'No') }),
      column.accessor('enable', {
        header: 'Enabled',
        cell: (ctx) =>
          ctx.getValue() ? (
            <span className="badge badge-ok">Enabled</span>
          ) : (
            <span className="badge">Disabled</span>
          ),
      }),
      column.accessor((c) => c.status?.State ?? '', {
        id: 'status',
        header: 'Connection',
        cell: (ctx) => <span title={ctx.row.original.status?.Message ?? ''}>{ctx.getValue() || '—'}</span>,
      }),
      column.display({
        id: 'actions',
        header: () => <span className="sr-only">Actions</span>,
        cell: (ctx) => (
          <Button
            size="sm"
            variant="ghost"
            onClick={() => setRemoving(ctx.row.original)}
            aria-label={`Delete connector ${ctx.row.original.address}`}
          >
            Delete
          </Button>
        ),
      }),
    ],
    [column],
  );
  const port = Number(form?.port);
  const portProblem =
    Number.isInteger(port) && port >= 0 && port <= 65535 ? null : 'Use a port from 0 to 65535.';
  return (
    <>
      <PageHeader
        title="Connectors"
        description="Container engines whose containers join this namespace as devices."
        actions={
          <Button
            variant="primary"
            onClick={() => {
              action.clearError();
              setForm({ address: '', port: '2375', secure: false, enable: true });
            }}
          >
            {icons.plus} Add connector
          </Button>
        }
      />
      <Card>
        <DataTable
          label="Connectors"
          columns={columns}
          page={connectors.data}
          loading={connectors.loading}
          error={connectors.error}
          onRetry={connectors.reload}
          query={query}
          onQuery={setQuery}
          rowKey={(c) => c.uid}
          empty={
            <Empty title="No connectors" icon={icons.plug}>
              Connect a Docker engine to list its containers under Containers.
            </Empty>
          }
        />
      </Card>
      <Dialog
        open={Boolean(form)}
        title="Add a connector"
        onClose={() => setForm(null)}
        submitLabel="Add connector"
        busy={action.pending}
        error={action.error}
        onSubmit={async () => {
          if (!form || portProblem) return;
          let status = 0;
          const ok = await action.run(async () => {
            const answer = await api.raw('createConnector', {
              body: { address: form.address.trim(), port, secure: form.secure, enable: form.enable },
              context: 'Could not add the connector',
            });
            status = answer.status;
          });
          if (ok) {
            // SPEC.md section 4: 201 means saved, but the engine could not be reached.
            toast(
              status === 201
                ? 'Connector saved, but the engine did not answer yet'
                : 'Connector added and connected',
              status === 201 ? 'error' : 'ok',
            );
            setForm(null);
            connectors.reload();
          }
        }}
      >
        {form ? (
          <>
            <TextField
              label="Address"
              value={form.address}
              onChange={(e) => setForm({ ...form, address: e.target.value })}
              required
              autoFocus
              hint="Host name or IP of the engine."
            />
            <TextField
              label="Port"
              type="number"
              value={form.port}
              onChange={(e) => setForm({ ...form, port: e.target.value })}
              error={portProblem}
            />
            <Switch
              label="Use TLS"
              checked={form.secure}
              onChange={(secure) => setForm({ ...form, secure })}
            />
            <Switch
              label="Enabled"
              checked={form.enable}
              onChange={(enable) => setForm({ ...form, enable })}
            />
          </>
        ) : null}
      </Dialog>
      <Dialog
        open={Boolean(removing)}
        title="Delete this connector?"
        description="Its containers stop being listed in this namespace."
        onClose={() => setRemoving(null)}
        submitLabel="Delete"
        submitVariant="danger"
        busy={action.pending}
        error={action.error}
        onSubmit={async () => {
          if (!removing) return;
          const ok = await action.run(() =>
            api.call('deleteConnector', {
              params: { uid: removing.uid },
              context: 'Could not delete the connector',
            }),
          );
          if (ok) {
            toast('Connector deleted');
            setRemoving(null);
            connectors.reload();
          }
        }}
      />
    </>
  );
}
