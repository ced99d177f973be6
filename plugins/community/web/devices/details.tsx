import {
  Alert,
  ApiError,
  Button,
  Card,
  CopyField,
  createColumnHelper,
  DataTable,
  Dialog,
  Empty,
  ErrorState,
  formatDate,
  formatRelative,
  type InstanceInfo,
  Link,
  Loading,
  PageHeader,
  TextField,
  useAction,
  useApi,
  useCan,
  useConsole,
  useNavigate,
  useResource,
  useToast,
  useUser,
} from '@gatehouse/console';
import { useMemo, useState } from 'react';
import { calls } from '../api';
import { useLiveRefresh } from '../live';
import type { Device, Tunnel } from '../types';
import { CustomFields } from './custom-fields';
import { type DeviceDialog, DeviceDialogs } from './dialogs';
import { containerKind, type DeviceKind, deviceKind } from './kind';
import { conflictExplanation, limitExplanation, StatusBadge } from './list';
import { SignInMethods } from './sign-in-methods';
import { sshCommand } from './ssh-command';
import { noteAccepted, useRefreshWhileWaiting, waitingForAgent } from './waiting';

const column = createColumnHelper<Tunnel>();

/** A tunnel's public address: the tunnel address as a subdomain of the console's host. */
export function tunnelUrl(
  tunnel: Tunnel,
  location: { protocol: string; host: string } = window.location,
): string {
  return `${location.protocol}//${tunnel.address}.${location.host}`;
}

function ttlText(ttl: number): string {
  if (ttl < 0) return 'Never expires';
  if (ttl < 3600) return `${Math.round(ttl / 60)} min`;
  if (ttl < 86400) return `${Math.round(ttl / 3600)} h`;
  return `${Math.round(ttl / 86400)} days`;
}

function Tunnels({ device }: { device: Device }) {
  const api = useApi();
  const toast = useToast();
  const tunnels = useResource(
    () => api.page<Tunnel>(calls.listTunnels, { params: { uid: device.uid } }),
    [api, device.uid],
  );
  const [creating, setCreating] = useState(false);
  const [form, setForm] = useState({ host: '127.0.0.1', port: '80', ttl: '-1' });
  const action = useAction();
  const can = useCan();
  const columns = useMemo(
    () => [
      column.display({
        id: 'url',
        header: 'Public URL',
        cell: (ctx) => (
          <a href={tunnelUrl(ctx.row.original)} target="_blank" rel="noreferrer" className="mono">
            {tunnelUrl(ctx.row.original)}
          </a>
        ),
      }),
      column.display({
        id: 'target',
        header: 'Forwards to',
        cell: (ctx) => <code>{`${ctx.row.original.host}:${ctx.row.original.port}`}</code>,
      }),
      column.accessor('ttl', { header: 'Lifetime', cell: (ctx) => ttlText(ctx.getValue()) }),
      column.display({
        id: 'actions',
        header: () => <span className="sr-only">Actions</span>,
        cell: (ctx) => (
          <Button
            size="sm"
            variant="ghost"
            aria-label={`Delete tunnel ${ctx.row.original.address}`}
            {...can(calls.deleteTunnel, 'delete tunnels').gate}
            onClick={async () => {
              const ok = await action.run(() =>
                api.call(calls.deleteTunnel, {
                  params: { uid: device.uid, address: ctx.row.original.address },
                  context: 'Could not delete the tunnel',
                }),
              );
              if (ok) {
                toast('Tunnel deleted');
                tunnels.reload();
              }
            }}
          >
            Delete
          </Button>
        ),
      }),
    ],
    [device.uid, can],
  );
  const portNumber = Number(form.port);
  const portProblem =
    Number.isInteger(portNumber) && portNumber >= 1 && portNumber <= 65535
      ? null
      : 'Use a port from 1 to 65535.';
  return (
    <Card
      title="Tunnels"
      actions={
        <Button
          size="sm"
          {...can(calls.createTunnel, 'create tunnels').gate}
          onClick={() => {
            action.clearError();
            setCreating(true);
          }}
        >
          New tunnel
        </Button>
      }
    >
      {action.error && !creating ? (
        <div className="card-body">
          <Alert>{action.error}</Alert>
        </div>
      ) : null}
      <DataTable
        label="Tunnels"
        columns={columns}
        page={tunnels.data}
        loading={tunnels.loading}
        error={tunnels.error}
        onRetry={tunnels.reload}
        rowKey={(t) => t.address}
        empty={
          <Empty title="No tunnels">
            A tunnel publishes a web service running on this device at its own address.
          </Empty>
        }
      />
      <Dialog
        open={creating}
        title="New tunnel"
        description="Publish an HTTP service on the device (or reachable from it) at a public address."
        onClose={() => setCreating(false)}
        busy={action.pending}
        error={action.error}
        submitLabel="Create tunnel"
        onSubmit={async () => {
          if (portProblem) return;
          const ok = await action.run(() =>
            api.call(calls.createTunnel, {
              params: { uid: device.uid },
              body: { host: form.host.trim(), port: portNumber, ttl: Number(form.ttl) },
              context: 'Could not create the tunnel',
            }),
          );
          if (ok) {
            setCreating(false);
            toast('Tunnel created');
            tunnels.reload();
          }
        }}
      >
        <TextField
          label="Host"
          value={form.host}
          onChange={(e) => setForm({ ...form, host: e.target.value })}
          required
          hint="An IP address as the device sees it."
        />
        <TextField
          label="Port"
          type="number"
          min={1}
          max={65535}
          value={form.port}
          onChange={(e) => setForm({ ...form, port: e.target.value })}
          required
          error={form.port ? portProblem : null}
        />
        <div className="field">
          <label htmlFor="tunnel-ttl">Lifetime</label>
          <select
            id="tunnel-ttl"
            className="input"
            value={form.ttl}
            onChange={(e) => setForm({ ...form, ttl: e.target.value })}
          >
            <option value="-1">Never expires</option>
            <option value="3600">1 hour</option>
            <option value="86400">1 day</option>
            <option value="604800">7 days</option>
          </select>
        </div>
      </Dialog>
    </Card>
  );
}

function Overview({ device, info, kind }: { device: Device; info: InstanceInfo; kind: DeviceKind }) {
  return (
    <Card title="Details">
      <div className="card-body">
        <dl className="props">
          <dt>Status</dt>
          <dd>
            <StatusBadge device={device} />
          </dd>
          <dt>Operating system</dt>
          <dd>{device.info?.pretty_name || '—'}</dd>
          <dt>Agent version</dt>
          <dd>{device.info?.version || '—'}</dd>
          <dt>Architecture</dt>
          <dd>
            {device.info?.arch || '—'}
            {device.info?.platform ? ` · ${device.info.platform}` : ''}
          </dd>
          <dt>MAC address</dt>
          <dd className="mono">{device.identity?.mac || '—'}</dd>
          <dt>Remote address</dt>
          <dd className="mono">{device.remote_addr || '—'}</dd>
          <dt>Last seen</dt>
          <dd title={formatDate(device.last_seen)}>{formatRelative(device.last_seen)}</dd>
          <dt>Registered</dt>
          <dd>{formatDate(device.created_at)}</dd>
          <dt>UID</dt>
          <dd className="mono">{device.uid}</dd>
          <dt>Tags</dt>
          <dd>
            <div className="row" style={{ gap: 4 }}>
              {(device.tags ?? []).length === 0 ? <span className="faint">No tags</span> : null}
              {(device.tags ?? []).map((t) => (
                <span key={t} className="badge badge-accent">
                  {t}
                </span>
              ))}
            </div>
          </dd>
        </dl>
        {device.status === 'accepted' ? (
          <div className="stack" style={{ marginTop: 18, gap: 6 }}>
            <span className="label">Connect with any SSH client</span>
            <CopyField label="ssh command" value={sshCommand(info, device)} />
            <span className="muted" style={{ fontSize: 12.5 }}>
              Replace <code>root</code> with an account on the {kind.noun}.
            </span>
            <SignInMethods device={device} kind={kind} />
          </div>
        ) : null}
      </div>
    </Card>
  );
}

function DetailsPage({ kind, uid }: { kind: DeviceKind; uid: string }) {
  const api = useApi();
  const user = useUser();
  const { info, slots } = useConsole();
  const navigate = useNavigate();
  const toast = useToast();
  const [dialog, setDialog] = useState<DeviceDialog>(null);
  const action = useAction();
  const can = useCan();
  const device = useResource(
    () =>
      api
        .call<Device>(kind.calls.get, { params: { uid }, context: `Could not load the ${kind.noun}` })
        .catch((error: unknown) => {
          // Gone, never in this namespace, or not a uid at all: asking again changes nothing, so it is said
          // without a retry.
          if (
            error instanceof ApiError &&
            (error.status === 404 || (error.status === 400 && error.fields.includes('uid')))
          )
            return null;
          throw error;
        }),
    [api, kind, uid],
  );
  const waiting = device.data ? waitingForAgent(device.data) : false;
  useRefreshWhileWaiting(waiting, device.reload);
  useLiveRefresh(device.reload, (e) => e.device === uid);
  if (device.error) return <ErrorState message={device.error} onRetry={device.reload} />;
  if (device.data === null) {
    const noun = kind.noun.charAt(0).toUpperCase() + kind.noun.slice(1);
    return (
      <>
        <PageHeader title={`${noun} not found`} />
        <Empty
          title={`There is no ${kind.noun} at this address in this namespace`}
          action={
            <Link to={kind.listPath} className="btn btn-primary">
              All {kind.noun}s
            </Link>
          }
        >
          It was removed, or it belongs to another namespace: switch namespace from the menu at the top.
        </Empty>
      </>
    );
  }
  if (!device.data) return <Loading />;
  const d = device.data;
  const actions = slots.deviceActions.filter((a) => a.available(d, user.role));
  const mayAccept = can(kind.calls.accept, `accept ${kind.noun}s`);
  const accept = async () => {
    const ok = await action.run(() =>
      api.call(kind.calls.accept, { params: { uid }, context: `Could not accept ${d.name}` }),
    );
    if (ok) {
      noteAccepted(uid);
      toast(`${d.name} accepted`);
      device.reload();
    }
  };
  return (
    <>
      <PageHeader
        title={d.name}
        description={<Link to={kind.listPath}>← All {kind.noun}s</Link>}
        actions={
          <>
            {d.status !== 'accepted' ? (
              <Button
                variant="primary"
                onClick={accept}
                busy={action.pending}
                disabled={!mayAccept.allowed || d.acceptable === false}
                title={mayAccept.reason || undefined}
              >
                Accept
              </Button>
            ) : null}
            {actions.map((a) => (
              <a.component
                key={a.id}
                device={d}
                detailsPath={kind.detailsPath(d.uid)}
                api={api}
                refresh={device.reload}
              />
            ))}
            <Button
              {...can(kind.calls.update, `rename ${kind.noun}s`).gate}
              onClick={() => setDialog({ kind: 'rename', device: d })}
            >
              Rename
            </Button>
            <Button
              {...can(kind.calls.tags, `change the tags of ${kind.noun}s`).gate}
              onClick={() => setDialog({ kind: 'tags', device: d })}
            >
              Edit tags
            </Button>
            <Button
              variant="danger"
              {...can(kind.calls.remove, `remove ${kind.noun}s`).gate}
              onClick={() => setDialog({ kind: 'remove', device: d })}
            >
              Remove
            </Button>
          </>
        }
      />
      <div className="stack">
        {d.identity_conflict ? (
          <Alert kind="warn" title="Same identity as an accepted device, another key">
            {conflictExplanation(d)}
          </Alert>
        ) : null}
        {d.status !== 'accepted' && d.acceptable === false ? (
          <Alert kind="warn" title="Device limit reached">
            {limitExplanation(undefined)}
            {slots.deviceLimit.map((Note, i) => (
              <Note key={String(i)} />
            ))}
          </Alert>
        ) : null}
        {waiting ? (
          <Alert kind="info" title="Waiting for the agent">
            {`${d.name} is accepted. Its agent is told at once and connects within a few seconds; this page updates by itself.`}
          </Alert>
        ) : null}
        {d.status === 'accepted' && !d.online && !waiting ? (
          <Alert kind="info" title="Offline">
            This {kind.noun} is not connected right now, so it cannot be reached until its agent comes back.
          </Alert>
        ) : null}
        {action.error ? <Alert>{action.error}</Alert> : null}
        <Overview device={d} info={info} kind={kind} />
        <CustomFields device={d} kind={kind} onChanged={device.reload} />
        {kind === deviceKind && d.status === 'accepted' ? <Tunnels device={d} /> : null}
      </div>
      <DeviceDialogs
        dialog={dialog}
        kind={kind}
        onClose={() => setDialog(null)}
        onDone={(removed) => {
          setDialog(null);
          if (removed) navigate(kind.listPath);
          else device.reload();
        }}
      />
    </>
  );
}

export function DeviceDetailsPage({ params }: { params: Record<string, string> }) {
  return <DetailsPage kind={deviceKind} uid={params.uid ?? ''} />;
}

export function ContainerDetailsPage({ params }: { params: Record<string, string> }) {
  return <DetailsPage kind={containerKind} uid={params.uid ?? ''} />;
}
