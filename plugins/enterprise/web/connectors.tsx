import {
  Button,
  Card,
  ConfirmDialog,
  CopyField,
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
  useAction,
  useApi,
  usePagedList,
  useToast,
  useUser,
} from '@gatehouse/console';
import { type ChangeEvent, useMemo, useState } from 'react';
import { calls } from './api';

/** A connector as `/api/connector` answers it; the TLS key and the token are never answered after creation. */
interface Connector {
  uid: string;
  tenant_id: string;
  enable: boolean;
  /** Where its process reaches the engine: a Unix socket's path (port 0) or a host; empty until it connected. */
  address: string;
  port: number;
  secure: boolean;
  status: { State: 'connected' | 'disconnected'; Message: string };
  tls: { ca?: string; cert?: string };
  created_at: string;
}

interface ConnectorForm {
  secure: boolean;
  enable: boolean;
  ca: string;
  cert: string;
  key: string;
}

const emptyForm: ConnectorForm = { secure: false, enable: true, ca: '', cert: '', key: '' };

/** The engine as the connector's process reported it, or what to do until it has. */
export function engineLabel(c: Pick<Connector, 'address' | 'port'>): string {
  if (!c.address) return 'not connected yet';
  return c.port === 0 ? `unix://${c.address}` : `${c.address}:${c.port}`;
}

/** The address this console is open at: the server the connector must reach. */
function serverAddress(): string {
  return window.location.origin;
}

/** The connector on the engine's host from the server's agent bundle, with Node.js 20 (it reads the Docker socket). */
export function connectorRunCommand(server: string, token: string): string {
  return [
    `curl -fsSL "${server}/agent/gatehouse-agent-linux-$(dpkg --print-architecture).tar.gz" | sudo tar -xz -C /opt`,
    `sudo GATEHOUSE_SERVER_ADDRESS="${server}" GATEHOUSE_CONNECTOR_TOKEN=${token} node --initial-old-space-size=64 /opt/gatehouse-agent/gatehouse-agent.mjs connector`,
  ].join('\n');
}

/** The connector in a container beside a Docker engine: the socket is mounted in, the token is in its environment. */
export function connectorDockerCommand(server: string, token: string): string {
  return [
    'docker run -d --name gatehouse-connector --restart unless-stopped',
    '-v /var/run/docker.sock:/var/run/docker.sock',
    `-e GATEHOUSE_SERVER_ADDRESS="${server}" -e GATEHOUSE_CONNECTOR_TOKEN=${token}`,
    `node:20 sh -c 'curl -fsSL "$GATEHOUSE_SERVER_ADDRESS/agent/gatehouse-agent-linux-$(dpkg --print-architecture).tar.gz" | tar -xz -C /opt && exec node --initial-old-space-size=64 /opt/gatehouse-agent/gatehouse-agent.mjs connector'`,
  ].join(' ');
}

/** The token, shown once, and the commands that run the connector with it. */
function RunConnector({ token }: { token: string }) {
  const server = serverAddress();
  return (
    <div className="stack" style={{ gap: 8 }}>
      <p className="alert alert-warn">
        This token is shown once. Anyone holding it can serve an engine to this namespace: keep it like a
        password. Making a new token disconnects the process that uses the old one.
      </p>
      <CopyField label="connector token" value={token} />
      <span className="label">On the engine’s host, with Node.js 20 or newer:</span>
      <CopyField label="connector command" value={connectorRunCommand(server, token)} wrap />
      <span className="label">Or in a container beside a Docker engine:</span>
      <CopyField label="connector docker command" value={connectorDockerCommand(server, token)} wrap />
      <span className="hint muted" style={{ fontSize: 12.5 }}>
        The connector dials out to Gatehouse and serves only the engine it is started with: the Docker socket
        by default, or <code>--engine tcp://host:port</code> (for podman:{' '}
        <code>--engine unix:///run/podman/podman.sock</code>). Gatehouse never connects to the engine itself.
      </span>
    </div>
  );
}

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

  const [token, setToken] = useState<string | null>(null);
  const [renewing, setRenewing] = useState<Connector | null>(null);

  /** 200: the engine answered through the connector; 201: saved, but it did not. */
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
        cell: (ctx) =>
          ctx.row.original.address ? (
            <code>{engineLabel(ctx.row.original)}</code>
          ) : (
            <span className="muted">{engineLabel(ctx.row.original)}</span>
          ),
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
          const name = c.address ? engineLabel(c) : `connector ${c.uid.slice(0, 8)}`;
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
                onClick={() => setRenewing(c)}
                aria-label={`New token for ${name}`}
              >
                New token
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
            namespace as devices, listed under <Link to="/containers">Containers</Link>. Each connector is a
            small process beside its engine that dials out to Gatehouse with the connector's token.
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
              Add a connector, then run it beside a Docker or podman engine to list its running containers
              under Containers.
            </Empty>
          }
        />
      </Card>
      <Dialog
        open={Boolean(form)}
        title="Add a connector"
        description="You get a token and the command that runs the connector beside the engine."
        onClose={() => setForm(null)}
        submitLabel="Add connector"
        busy={action.pending}
        error={action.error}
        onSubmit={async () => {
          if (!form || keyProblem) return;
          const tls = {
            ...(form.ca.trim() ? { ca: form.ca } : {}),
            ...(form.cert.trim() ? { cert: form.cert, key: form.key } : {}),
          };
          let made: (Connector & { token: string }) | undefined;
          const ok = await action.run(async () => {
            made = await api.call<Connector & { token: string }>(calls.createConnector, {
              body: {
                secure: form.secure,
                enable: form.enable,
                ...(form.secure && Object.keys(tls).length ? { tls } : {}),
              },
              context: 'Could not add the connector',
            });
          });
          if (ok && made) {
            toast('Connector added: run it beside the engine');
            setForm(null);
            setToken(made.token);
            connectors.reload();
          }
        }}
      >
        {form ? (
          <>
            <Switch
              label="Speak TLS to the engine (an engine with --tlsverify)"
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
      <Dialog open={Boolean(token)} title="Run the connector" onClose={() => setToken(null)}>
        {token ? <RunConnector token={token} /> : null}
      </Dialog>
      <ConfirmDialog
        subject={renewing}
        title="Make a new token?"
        description="The connector's current token stops working, and the process that uses it is disconnected."
        confirmLabel="New token"
        onConfirm={async (connector) => {
          const answer = await api.call<{ token: string }>(calls.newConnectorToken, {
            params: { uid: connector.uid },
            context: 'Could not make a new token',
          });
          setToken(answer.token);
        }}
        onDone={() => connectors.reload()}
        onClose={() => setRenewing(null)}
      />
      <Dialog
        open={Boolean(info)}
        title={info ? `Engine at ${engineLabel(info.connector)}` : 'Engine'}
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
