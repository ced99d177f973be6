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
  useCan,
  useConsole,
  useFormDialog,
  usePagedList,
  useToast,
  useUser,
} from '@gatehouse/console';
import { type ChangeEvent, useMemo, useState } from 'react';
import type { ConnectorView as Connector, ConnectorWithToken } from '../connectors/schemas';
import { calls } from './api';

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

/** The connector on the engine's host: the agent's executable from the server (no Node.js), run as root. */
export function connectorRunCommand(server: string, token: string): string {
  return [
    `sudo mkdir -p /opt/gatehouse-agent && sudo curl -fsSL "${server}/agent/gatehouse-agent-linux-$(dpkg --print-architecture)" -o /opt/gatehouse-agent/gatehouse-agent && sudo chmod 0755 /opt/gatehouse-agent/gatehouse-agent`,
    `sudo GATEHOUSE_SERVER_ADDRESS="${server}" GATEHOUSE_CONNECTOR_TOKEN=${token} /opt/gatehouse-agent/gatehouse-agent connector`,
  ].join('\n');
}

/**
 * The connector in a container beside a Docker engine: the agent image, loaded from the server, in connector mode;
 * the socket is mounted in, the token is in its environment.
 */
export function connectorDockerCommand(server: string, token: string, version: string): string {
  return [
    `curl -fsSL "${server}/agent/gatehouse-agent-image-linux-amd64.tar.gz" | gunzip | docker load &&`,
    'docker run -d --name gatehouse-connector --restart unless-stopped',
    '-v /var/run/docker.sock:/var/run/docker.sock',
    `-e GATEHOUSE_SERVER_ADDRESS="${server}" -e GATEHOUSE_CONNECTOR_TOKEN=${token}`,
    `localhost/gatehouse-agent:${version} connector`,
  ].join(' ');
}

/** The token, shown once, and the commands that run the connector with it. */
function RunConnector({ token }: { token: string }) {
  const server = serverAddress();
  const { info } = useConsole();
  return (
    <div className="stack" style={{ gap: 8 }}>
      <p className="alert alert-warn">
        This token is shown once. Anyone holding it can serve an engine to this namespace: keep it like a
        password. Making a new token disconnects the process that uses the old one.
      </p>
      <CopyField label="connector token" value={token} />
      <span className="label">On the engine’s host (Debian or Ubuntu, x86_64 or arm64):</span>
      <CopyField label="connector command" value={connectorRunCommand(server, token)} wrap />
      <span className="label">Or in a container beside a Docker engine:</span>
      <CopyField
        label="connector docker command"
        value={connectorDockerCommand(server, token, info.version)}
        wrap
      />
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
  const can = useCan();
  const mayUpdate = can(calls.updateConnector, 'change connectors');
  const { list: connectors, table: connectorsTable } = usePagedList(
    (query) =>
      api.page<Connector>(calls.listConnectors, { query: { page: query.page, per_page: query.perPage } }),
    [api, user.tenant],
  );
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
            disabled={busy || !mayUpdate.allowed}
            title={mayUpdate.reason || undefined}
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
                disabled={busy || !mayUpdate.allowed}
                title={mayUpdate.reason || undefined}
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
                {...can(calls.newConnectorToken, 'make connector tokens').gate}
                onClick={() => setRenewing(c)}
                aria-label={`New token for ${name}`}
              >
                New token
              </Button>
              <Button
                size="sm"
                variant="ghost"
                {...can(calls.deleteConnector, 'delete connectors').gate}
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
    [column, busy, can, mayUpdate.allowed, mayUpdate.reason],
  );
  const keyProblemOf = (f: ConnectorForm) =>
    Boolean(f.cert.trim()) !== Boolean(f.key.trim())
      ? 'Give the client certificate and its key together.'
      : null;
  const form = useFormDialog({
    action,
    valid: (f) => !keyProblemOf(f),
    send: (f: ConnectorForm) => {
      const tls = {
        ...(f.ca.trim() ? { ca: f.ca } : {}),
        ...(f.cert.trim() ? { cert: f.cert, key: f.key } : {}),
      };
      return api.call<ConnectorWithToken>(calls.createConnector, {
        body: { secure: f.secure, enable: f.enable, ...(f.secure && Object.keys(tls).length ? { tls } : {}) },
        context: 'Could not add the connector',
      });
    },
    done: (made) => {
      toast('Connector added: run it beside the engine');
      setToken(made.token);
      connectors.reload();
    },
  });
  const keyProblem = form.draft ? keyProblemOf(form.draft) : null;
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
            {...can(calls.createConnector, 'add connectors').gate}
            onClick={() => form.open(emptyForm)}
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
        {...form.dialog}
        title="Add a connector"
        description="You get a token and the command that runs the connector beside the engine."
        submitLabel="Add connector"
      >
        {form.draft ? (
          <>
            <Switch
              label="Speak TLS to the engine (an engine with --tlsverify)"
              checked={form.draft.secure}
              onChange={(secure) => form.change({ secure })}
            />
            {form.draft.secure ? (
              <>
                <PemField
                  label="CA certificate"
                  value={form.draft.ca}
                  hint="The CA the engine's certificate chains to (ca.pem); empty: the system's CAs."
                  onChange={(ca) => form.change({ ca })}
                />
                <PemField
                  label="Client certificate"
                  value={form.draft.cert}
                  hint="cert.pem, for an engine that asks for client certificates (--tlsverify)."
                  onChange={(cert) => form.change({ cert })}
                />
                <PemField
                  label="Client key"
                  value={form.draft.key}
                  hint="key.pem. Stored encrypted, and never shown again."
                  onChange={(key) => form.change({ key })}
                />
                {keyProblem ? <p className="alert alert-error">{keyProblem}</p> : null}
              </>
            ) : null}
            <Switch
              label="Enabled: list its running containers"
              checked={form.draft.enable}
              onChange={(enable) => form.change({ enable })}
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
