import {
  Alert,
  Button,
  Card,
  createColumnHelper,
  DataTable,
  Empty,
  encodeFilter,
  formatRelative,
  icons,
  Link,
  PageHeader,
  useAction,
  useApi,
  useCan,
  useConsole,
  usePagedList,
  useResource,
  useToast,
  useUser,
} from '@gatehouse/console';
import { useEffect, useMemo, useState } from 'react';
import { calls } from '../api';
import { useLiveRefresh } from '../live';
import type { Device, DeviceStatus, Namespace } from '../types';
import { type DeviceDialog, DeviceDialogs } from './dialogs';
import { InstallCommands } from './install';
import { containerKind, type DeviceKind, deviceKind } from './kind';
import { noteAccepted, useRefreshWhileWaiting, waitingForAgent } from './waiting';

const views: { status: DeviceStatus; label: string }[] = [
  { status: 'accepted', label: 'Accepted' },
  { status: 'pending', label: 'Pending' },
  { status: 'rejected', label: 'Rejected' },
];

export function StatusBadge({ device }: { device: Device }) {
  if (waitingForAgent(device)) {
    return (
      <span className="badge badge-warn">
        <span className="dot" aria-hidden="true" /> Waiting for the agent
      </span>
    );
  }
  if (device.status === 'accepted') {
    return device.online ? (
      <span className="badge badge-ok">
        <span className="dot dot-online" aria-hidden="true" /> Online
      </span>
    ) : (
      <span className="badge">
        <span className="dot" aria-hidden="true" /> Offline
      </span>
    );
  }
  if (device.status === 'pending') return <span className="badge badge-warn">Pending</span>;
  if (device.status === 'rejected') return <span className="badge badge-danger">Rejected</span>;
  return <span className="badge">{device.status}</span>;
}

/** Why a pending device cannot be accepted (the namespace device limit). */
export function limitExplanation(namespace: Namespace | undefined): string {
  const max = namespace?.max_devices;
  return max && max > 0
    ? `This namespace may have ${max} accepted devices and has reached that limit. Only devices removed in the last 30 days can come back; remove an accepted device to make room.`
    : 'The namespace device limit is reached. Only devices removed in the last 30 days can come back; remove an accepted device to make room.';
}

/** Why a pending device carries the identity of an accepted one: it is another device, with another key. */
export function conflictExplanation(device: Device): string {
  const other = device.identity_conflict;
  if (!other) return '';
  return (
    `The accepted device ${other.name} has the same identity (${device.identity?.mac ?? 'MAC'}) but another key. This is ` +
    `a different device: a reinstalled agent, or someone impersonating ${other.name}. Accepting it does not ` +
    `replace ${other.name}; if ${other.name} was reinstalled, remove it first.`
  );
}

export function useDebounced<T>(value: T, ms: number): T {
  const [debounced, setDebounced] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setDebounced(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return debounced;
}

function DeviceList({ kind, status }: { kind: DeviceKind; status: DeviceStatus }) {
  const api = useApi();
  const user = useUser();
  const { slots } = useConsole();
  const toast = useToast();
  const [search, setSearch] = useState('');
  const term = useDebounced(search.trim(), 250);
  const [dialog, setDialog] = useState<DeviceDialog>(null);
  const action = useAction();
  const can = useCan();

  const filter = term
    ? encodeFilter([{ type: 'property', params: { name: 'name', operator: 'contains', value: term } }])
    : undefined;
  const {
    setQuery,
    list: devices,
    table: devicesTable,
  } = usePagedList(
    (query) =>
      api.page<Device>(kind.calls.list, {
        query: {
          status,
          page: query.page,
          per_page: query.perPage,
          sort_by: query.sortBy,
          order_by: query.order,
          filter,
        },
      }),
    [api, kind, status, filter, user.tenant],
    { sortBy: 'last_seen', order: 'desc' },
  );

  useEffect(() => setQuery((q) => ({ ...q, page: 1 })), [status, term]);
  const namespace = useResource(
    () => api.call<Namespace>(calls.getNamespace, { params: { tenant: user.tenant } }),
    [api, user.tenant, devices.data],
  );
  const atLimit = devices.data?.items.some((d) => d.status !== 'accepted' && d.acceptable === false) ?? false;
  useRefreshWhileWaiting(devices.data?.items.some((d) => waitingForAgent(d)) ?? false, devices.reload);
  useLiveRefresh(devices.reload, (e) => e.kind.startsWith('device.'));

  const changeStatus = async (device: Device, to: 'accept' | 'reject') => {
    const ok = await action.run(() =>
      to === 'accept'
        ? api.call(kind.calls.accept, {
            params: { uid: device.uid },
            context: `Could not accept ${device.name}`,
          })
        : api.call(kind.calls.status, {
            params: { uid: device.uid, status: 'reject' },
            context: `Could not reject ${device.name}`,
          }),
    );
    if (ok) {
      if (to === 'accept') noteAccepted(device.uid);
      toast(to === 'accept' ? `${device.name} accepted` : `${device.name} rejected`);
      devices.reload();
    }
  };

  const column = createColumnHelper<Device>();
  const columns = useMemo(
    () => [
      column.accessor('name', {
        header: 'Name',
        cell: (ctx) => (
          <Link className="nowrap" to={kind.detailsPath(ctx.row.original.uid)}>
            {ctx.getValue()}
          </Link>
        ),
      }),
      column.display({
        id: 'state',
        header: 'State',
        cell: (ctx) => (
          <div className="row" style={{ gap: 6 }}>
            <StatusBadge device={ctx.row.original} />
            {ctx.row.original.status !== 'accepted' && ctx.row.original.acceptable === false ? (
              <span className="badge badge-warn" title={limitExplanation(namespace.data)}>
                Limit reached
              </span>
            ) : null}
            {ctx.row.original.identity_conflict ? (
              <span className="badge badge-danger" title={conflictExplanation(ctx.row.original)}>
                Another key
              </span>
            ) : null}
          </div>
        ),
      }),
      column.accessor((d) => d.info?.pretty_name ?? '', {
        id: 'info.pretty_name',
        header: 'Operating system',
        enableSorting: false,
        cell: (ctx) => <span className="nowrap">{ctx.getValue() || 'Unknown'}</span>,
      }),
      column.accessor((d) => d.tags ?? [], {
        id: 'tags',
        header: 'Tags',
        enableSorting: false,
        cell: (ctx) => (
          <div className="row" style={{ gap: 4, flexWrap: 'nowrap' }}>
            {ctx.getValue().length === 0 ? <span className="faint">—</span> : null}
            {ctx.getValue().map((t) => (
              <span key={t} className="badge badge-accent">
                {t}
              </span>
            ))}
          </div>
        ),
      }),
      column.accessor('last_seen', {
        header: 'Last seen',
        cell: (ctx) => <span title={ctx.getValue() ?? ''}>{formatRelative(ctx.getValue())}</span>,
      }),
      column.display({
        id: 'actions',
        header: () => <span className="sr-only">Actions</span>,
        cell: (ctx) => {
          const d = ctx.row.original;
          const accept = can(kind.calls.accept, `accept ${kind.noun}s`);
          return (
            <div className="row" style={{ justifyContent: 'flex-end', gap: 6, flexWrap: 'nowrap' }}>
              {d.status !== 'accepted' ? (
                <Button
                  size="sm"
                  variant="primary"
                  disabled={!accept.allowed || d.acceptable === false || action.pending}
                  title={
                    accept.reason || (d.acceptable === false ? limitExplanation(namespace.data) : undefined)
                  }
                  onClick={() => changeStatus(d, 'accept')}
                  aria-label={`Accept ${d.name}`}
                >
                  Accept
                </Button>
              ) : null}
              {d.status === 'pending' ? (
                <Button
                  size="sm"
                  {...can(kind.calls.status, `reject ${kind.noun}s`).gate}
                  onClick={() => changeStatus(d, 'reject')}
                  aria-label={`Reject ${d.name}`}
                >
                  Reject
                </Button>
              ) : null}
              {d.status === 'accepted' ? (
                <Link
                  className="btn btn-sm"
                  to={`${kind.detailsPath(d.uid)}/terminal`}
                  aria-label={`Connect to ${d.name}`}
                  aria-disabled={!d.online || undefined}
                >
                  {icons.terminal} Connect
                </Link>
              ) : null}
              {d.status === 'accepted' ? (
                <>
                  <Button
                    size="sm"
                    variant="ghost"
                    {...can(kind.calls.update, `rename ${kind.noun}s`).gate}
                    onClick={() => setDialog({ kind: 'rename', device: d })}
                    aria-label={`Rename ${d.name}`}
                  >
                    Rename
                  </Button>
                  <Button
                    size="sm"
                    variant="ghost"
                    {...can(kind.calls.tags, `change the tags of ${kind.noun}s`).gate}
                    onClick={() => setDialog({ kind: 'tags', device: d })}
                    aria-label={`Edit tags of ${d.name}`}
                  >
                    Tags
                  </Button>
                </>
              ) : null}
              <Button
                size="sm"
                variant="ghost"
                {...can(kind.calls.remove, `remove ${kind.noun}s`).gate}
                onClick={() => setDialog({ kind: 'remove', device: d })}
                aria-label={`Remove ${d.name}`}
              >
                Remove
              </Button>
            </div>
          );
        },
      }),
    ],
    [kind, namespace.data, action.pending, can],
  );

  const emptyText: Record<string, { title: string; body: string }> = {
    accepted: {
      title: term ? `No ${kind.noun}s match “${term}”` : `No accepted ${kind.noun}s yet`,
      body: term
        ? 'Try another name.'
        : kind === deviceKind
          ? 'Install the agent on a machine with one of these commands; it shows up under Pending, ready to accept.'
          : 'Add a connector to a container engine under Connectors: its running containers show up under Pending, ready to accept.',
    },
    pending: {
      title: term ? `No pending ${kind.noun}s match “${term}”` : `Nothing waiting`,
      body:
        kind === deviceKind
          ? 'Devices whose agent has registered appear here until you accept or reject them.'
          : "Running containers of your connectors' engines appear here until you accept or reject them.",
    },
    rejected: {
      title: `No rejected ${kind.noun}s`,
      body: `${kind.plural} you reject are kept here; you can accept them later.`,
    },
  };
  const empty = emptyText[status] ?? { title: 'Nothing here', body: '' };

  return (
    <>
      {atLimit && status !== 'accepted' ? (
        <div style={{ marginBottom: 14 }}>
          <Alert kind="warn" title="Device limit reached">
            {limitExplanation(namespace.data)}
            {slots.deviceLimit.map((Note, i) => (
              <Note key={String(i)} />
            ))}
          </Alert>
        </div>
      ) : null}
      {action.error ? (
        <div style={{ marginBottom: 14 }}>
          <Alert>{action.error}</Alert>
        </div>
      ) : null}
      <Card>
        <div className="toolbar">
          <label className="sr-only" htmlFor="device-search">
            Search {kind.noun}s by name
          </label>
          <input
            id="device-search"
            className="input"
            type="search"
            placeholder={`Search ${kind.noun}s by name`}
            value={search}
            onChange={(e) => setSearch(e.target.value)}
          />
          {namespace.data ? (
            <span className="muted" style={{ marginLeft: 'auto', fontSize: 13 }}>
              {namespace.data.device_count ?? 0} of{' '}
              {namespace.data.max_devices > 0 ? namespace.data.max_devices : 'unlimited'} device slots in use
            </span>
          ) : null}
        </div>
        <DataTable
          label={`${views.find((v) => v.status === status)?.label ?? ''} ${kind.noun}s`}
          columns={columns}
          {...devicesTable}
          rowKey={(d) => d.uid}
          empty={
            <Empty
              title={empty.title}
              icon={kind === deviceKind ? icons.devices : icons.containers}
              action={
                kind === deviceKind && status === 'accepted' && !term ? (
                  <div style={{ textAlign: 'left', marginTop: 14, width: '100%', maxWidth: 720 }}>
                    <InstallCommands tenant={user.tenant} />
                  </div>
                ) : null
              }
            >
              {empty.body}
            </Empty>
          }
        />
      </Card>
      <DeviceDialogs
        dialog={dialog}
        kind={kind}
        onClose={() => setDialog(null)}
        onDone={() => {
          setDialog(null);
          devices.reload();
        }}
      />
    </>
  );
}

function ListPage({ kind, params }: { kind: DeviceKind; params: Record<string, string> }) {
  const status = (views.find((v) => v.status === params.status)?.status ?? 'accepted') as DeviceStatus;
  return (
    <>
      <PageHeader
        title={kind.plural}
        description={
          kind === deviceKind
            ? 'Machines whose agent has registered with this namespace, wherever the agent runs (a host, a VM or a container).'
            : 'Containers that a container-engine connector exposes. An agent running inside a container is listed under Devices.'
        }
      />
      <nav className="tabs" aria-label={`${kind.plural} by status`}>
        {views.map((v) => (
          <Link
            key={v.status}
            to={v.status === 'accepted' ? kind.listPath : `${kind.listPath}/${v.status}`}
            aria-current={v.status === status ? 'page' : undefined}
          >
            {v.label}
          </Link>
        ))}
      </nav>
      <DeviceList kind={kind} status={status} />
    </>
  );
}

export function DevicesPage({ params }: { params: Record<string, string> }) {
  return <ListPage kind={deviceKind} params={params} />;
}

export function ContainersPage({ params }: { params: Record<string, string> }) {
  return <ListPage kind={containerKind} params={params} />;
}
