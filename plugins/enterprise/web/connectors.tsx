import {
  Button,
  Card,
  ConfirmDialog,
  createColumnHelper,
  DataTable,
  Dialog,
  Empty,
  errorText,
  icons,
  Link,
  PageHeader,
  Switch,
  TextArea,
  TextField,
  useAction,
  useApi,
  usePagedList,
  useToast,
  useUser,
} from '@gatehouse/console';
import { type ChangeEvent, useMemo, useState } from 'react';
import { calls } from './api';

/** A connector as `/api/connector` answers it (SPEC.md section 3); the TLS key is never answered. */
interface Connector {
  uid: string;
  tenant_id: string;
  enable: boolean;
  address: string;
  port: number;
  secure: boolean;
  status: { State: 'connected' | 'disconnected'; Message: string };
  tls: { ca?: string; cert?: string };
  created_at: string;
}

interface ConnectorForm {
  address: string;
  port: string;
  secure: boolean;
  enable: boolean;
  ca: string;
  cert: string;
  key: string;
}

const emptyForm: ConnectorForm = {
  address: '',
  port: '2376',
  secure: true,
  enable: true,
  ca: '',
  cert: '',
  key: '',
};

/** The engine's information object: a few of its fields are worth showing. */
type EngineInfo = Record<string, unknown>;

/** A PEM field that also takes a file (the CA, certificate and key are usually files on the engine's host). */
function PemField({
  label,
  value,
  hint,
  onChange,
}: {
  label: string;
  value: string;
  hint: string;
  onChange: (value: string) => void;
}) {
  const upload = async (e: ChangeEvent<HTMLInputElement>) => {
    const file = e.target.files?.[0];
    if (file) onChange(await file.text());
  };
  return (
    <div>
      <TextArea
        label={label}
        value={value}
        hint={hint}
        rows={3}
        spellCheck={false}
        placeholder="-----BEGIN ..."
        onChange={(e) => onChange(e.target.value)}
      />
      <input type="file" aria-label={`${label} file`} accept=".pem,.crt,.key,text/plain" onChange={upload} />
    </div>
  );
}

export function ConnectorsPage() {
  const api = useApi();
  const user = useUser();
  const toast = useToast();
  const { list: connectors, table: connectorsTable } = usePagedList(
    (query) =>
      api.page<Connector>(calls.listConnectors, { query: { page: query.page, per_page: query.perPage } }),
    [api, user.tenant],
  );
  const [form, setForm] = useState<ConnectorForm | null>(null);
  const [removing, setRemoving] = useState<Connector | null>(null);
  const [info, setInfo] = useState<{ connector: Connector; info: EngineInfo } | null>(null);
  const action = useAction();

  /** 200: connected; 201: saved, but the engine did not answer (SPEC.md section 4). */
  const report = (status: number, connector: Connector, done: string) => {
    if (status === 201) toast(`${done}, but the engine did not answer: ${connector.status.Message}`, 'error');
    else toast(`${done}: connected to ${connector.status.Message}`);
  };

  const [busy, setBusy] = useState(false);
  /** A row's call: its outcome is told in a toast (the row has no room for an error). */
  const rowCall = async (task: () => Promise<void>) => {
    setBusy(true);
    try {
      await task();
    } catch (err) {
      toast(errorText(err), 'error');
    } finally {
      setBusy(false);
    }
  };

  /** PATCH answers 200 or 201 like a create; an empty change just tries the engine again. */
  const update = (connector: Connector, body: Record<string, unknown>, done: string) =>
    rowCall(async () => {
      const answer = await api.raw<Connector>(calls.updateConnector, {
        params: { uid: connector.uid },
        body,
        context: 'Could not update the connector',
      });
      report(answer.status, answer.data, done);
      connectors.reload();
    });

  const showInfo = (connector: Connector) =>
    rowCall(async () => {
      const data = await api.call<EngineInfo>(calls.getConnectorInfo, {
        params: { uid: connector.uid },
        context: 'The engine did not answer',
      });
      setInfo({ connector, info: data });
    });

  const column = createColumnHelper<Connector>();
  const columns = useMemo(
    () => [
      column.display({
        id: 'address',
        header: 'Engine',
        cell: (ctx) => <code>{`${ctx.row.original.address}:${ctx.row.original.port}`}</code>,
      }),
      column.accessor('secure', {
        header: 'TLS',
        cell: (ctx) =>
          ctx.getValue() ? (ctx.row.original.tls.cert ? 'Yes, client certificate' : 'Yes') : 'No',
      }),
      column.accessor((c) => c.status.State, {
        id: 'status',
        header: 'Connection',
        cell: (ctx) => (
          <span>
            <span className={ctx.getValue() === 'connected' ? 'badge badge-ok' : 'badge badge-warn'}>
              {ctx.getValue() === 'connected' ? 'Connected' : 'Not connected'}
            </span>{' '}
            <span className="muted">{ctx.row.original.status.Message}</span>
          </span>
        ),
      }),
      column.accessor('enable', {
        header: 'Enabled',
        cell: (ctx) => (
          <Switch
            label={ctx.getValue() ? 'Enabled' : 'Disabled'}
            checked={ctx.getValue()}
            disabled={busy}
            onChange={(enable) =>
              update(ctx.row.original, { enable }, enable ? 'Connector enabled' : 'Connector disabled')
            }
          />
        ),
      }),
      column.display({
        id: 'actions',
        header: () => <span className="sr-only">Actions</span>,
        cell: (ctx) => {
          const c = ctx.row.original;
          const name = `${c.address}:${c.port}`;
          return (
            <span className="row">
              <Button
                size="sm"
                variant="ghost"
                disabled={busy}
                onClick={() => update(c, {}, 'Connection tested')}
                aria-label={`Test connection to ${name}`}
              >
                Test connection
              </Button>
              <Button
                size="sm"
                variant="ghost"
                disabled={busy}
                onClick={() => showInfo(c)}
                aria-label={`Engine details of ${name}`}
              >
                Details
              </Button>
              <Button
                size="sm"
                variant="ghost"
                onClick={() => setRemoving(c)}
                aria-label={`Delete connector ${name}`}
              >
                Delete
              </Button>
            </span>
          );
        },
      }),
    ],
    [column, busy],
  );
  const port = Number(form?.port);
  const portProblem =
    Number.isInteger(port) && port >= 0 && port <= 65535 ? null : 'Use a port from 0 to 65535.';
  const keyProblem =
    form && Boolean(form.cert.trim()) !== Boolean(form.key.trim())
      ? 'Give the client certificate and its key together.'
      : null;
  return (
    <>
      <PageHeader
        title="Connectors"
        description={
          <>
            Container engines (Docker, or podman's Docker-compatible API) whose running containers join this
            namespace as devices, listed under <Link to="/containers">Containers</Link>.
          </>
        }
        actions={
          <Button
            variant="primary"
            onClick={() => {
              action.clearError();
              setForm(emptyForm);
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
          {...connectorsTable}
          rowKey={(c) => c.uid}
          empty={
            <Empty title="No connectors" icon={icons.plug}>
              Connect a Docker or podman engine to list its running containers under Containers.
            </Empty>
          }
        />
      </Card>
      <Dialog
        open={Boolean(form)}
        title="Add a connector"
        description="Gatehouse connects to the engine's API at once and tells you whether it answered."
        onClose={() => setForm(null)}
        submitLabel="Add connector"
        busy={action.pending}
        error={action.error}
        onSubmit={async () => {
          if (!form || portProblem || keyProblem) return;
          const tls = {
            ...(form.ca.trim() ? { ca: form.ca } : {}),
            ...(form.cert.trim() ? { cert: form.cert, key: form.key } : {}),
          };
          let status = 0;
          let made: Connector | undefined;
          const ok = await action.run(async () => {
            const answer = await api.raw<Connector>(calls.createConnector, {
              body: {
                address: form.address.trim(),
                port,
                secure: form.secure,
                enable: form.enable,
                ...(form.secure && Object.keys(tls).length ? { tls } : {}),
              },
              context: 'Could not add the connector',
            });
            status = answer.status;
            made = answer.data;
          });
          if (ok && made) {
            report(status, made, 'Connector added');
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
              hint="Host name or IP address of the engine's API."
            />
            <TextField
              label="Port"
              type="number"
              value={form.port}
              onChange={(e) => setForm({ ...form, port: e.target.value })}
              error={portProblem}
              hint="Docker serves TLS on 2376 and plain HTTP on 2375 by convention."
            />
            <Switch
              label="Use TLS"
              checked={form.secure}
              onChange={(secure) => setForm({ ...form, secure })}
            />
            {form.secure ? (
              <>
                <PemField
                  label="CA certificate"
                  value={form.ca}
                  hint="The CA the engine's certificate chains to (ca.pem); empty: the system's CAs."
                  onChange={(ca) => setForm({ ...form, ca })}
                />
                <PemField
                  label="Client certificate"
                  value={form.cert}
                  hint="cert.pem, for an engine that asks for client certificates (--tlsverify)."
                  onChange={(cert) => setForm({ ...form, cert })}
                />
                <PemField
                  label="Client key"
                  value={form.key}
                  hint="key.pem. Stored encrypted, and never shown again."
                  onChange={(key) => setForm({ ...form, key })}
                />
                {keyProblem ? <p className="alert alert-error">{keyProblem}</p> : null}
              </>
            ) : null}
            <Switch
              label="Enabled: list its running containers"
              checked={form.enable}
              onChange={(enable) => setForm({ ...form, enable })}
            />
          </>
        ) : null}
      </Dialog>
      <Dialog
        open={Boolean(info)}
        title={info ? `Engine at ${info.connector.address}:${info.connector.port}` : 'Engine'}
        onClose={() => setInfo(null)}
      >
        {info ? (
          <dl className="props">
            {(
              [
                ['Name', 'Name'],
                ['Version', 'ServerVersion'],
                ['Operating system', 'OperatingSystem'],
                ['Architecture', 'Architecture'],
                ['Containers running', 'ContainersRunning'],
                ['Containers', 'Containers'],
                ['Images', 'Images'],
                ['Storage driver', 'Driver'],
              ] as const
            ).flatMap(([label, key]) => [
              <dt key={`${key}-label`}>{label}</dt>,
              <dd key={key}>{String(info.info[key] ?? '—')}</dd>,
            ])}
          </dl>
        ) : null}
      </Dialog>
      <ConfirmDialog
        subject={removing}
        title="Delete this connector?"
        description="Its containers stop being devices of this namespace: pending ones go, accepted ones are removed."
        onConfirm={(connector) =>
          api.call(calls.deleteConnector, {
            params: { uid: connector.uid },
            context: 'Could not delete the connector',
          })
        }
        onDone={() => {
          toast('Connector deleted');
          connectors.reload();
        }}
        onClose={() => setRemoving(null)}
      />
    </>
  );
}
