import {
  Card,
  createColumnHelper,
  DataTable,
  Empty,
  formatDate,
  formatRelative,
  icons,
  Link,
  PageHeader,
  useApi,
  usePagedList,
  useResource,
  useUser,
} from '@gatehouse/console';
import { useMemo } from 'react';
import { calls } from '../api';
import type { Device, Session } from '../types';
import { formatDuration, recordingLabel, recordingState, timing } from './describe';

export function SessionState({ session }: { session: Session }) {
  if (session.active)
    return (
      <span className="badge badge-ok">
        <span className="dot dot-online" aria-hidden="true" /> Active
      </span>
    );
  if (!session.authenticated) return <span className="badge badge-danger">Not authenticated</span>;
  return <span className="badge">Ended</span>;
}

export function SessionsPage() {
  const api = useApi();
  const user = useUser();
  const { list: sessions, table: sessionsTable } = usePagedList(
    (query) =>
      api.page<Session>(calls.listSessions, { query: { page: query.page, per_page: query.perPage } }),
    [api, user.tenant],
  );
  // The API gives each session its device "when it still exists", without saying whether it is an agent's device or
  // a container a connector exposes. Each device of the page is looked up once: its kind gives the link, and its
  // name stands in when the answer leaves the device out, so a person reads names rather than uids.
  const uids = [...new Set((sessions.data?.items ?? []).map((s) => s.device_uid))];
  const found = useResource(async () => {
    const out: Record<string, { name: string; path: string }> = {};
    await Promise.all(
      uids.map(async (uid) => {
        for (const [call, path] of [
          [calls.getDevice, '/device/'],
          [calls.getContainer, '/container/'],
        ] as const) {
          try {
            out[uid] = { name: (await api.call<Device>(call, { params: { uid } })).name, path: path + uid };
            return;
          } catch {
            // Not of this kind (or removed): try the other list, else no link.
          }
        }
      }),
    );
    return out;
  }, [api, uids.join(',')]);
  const column = createColumnHelper<Session>();
  const columns = useMemo(
    () => [
      column.display({
        id: 'state',
        header: 'State',
        cell: (ctx) => <SessionState session={ctx.row.original} />,
      }),
      column.accessor((s) => s.device?.name ?? s.device_uid.slice(0, 12), {
        id: 'device',
        header: 'Device',
        // The device column opens the device; the session opens from its own link at the end of the row.
        cell: (ctx) => {
          const path = (ctx.row.original as Session & { devicePath?: string }).devicePath;
          return path ? <Link to={path}>{ctx.getValue()}</Link> : <span>{ctx.getValue()}</span>;
        },
      }),
      column.accessor('username', { header: 'User' }),
      column.accessor('ip_address', {
        header: 'From',
        cell: (ctx) => <span className="mono">{ctx.getValue()}</span>,
      }),
      column.accessor('type', {
        header: 'Type',
        cell: (ctx) => <span className="badge">{ctx.getValue() === 'web' ? 'Web terminal' : 'SSH'}</span>,
      }),
      column.accessor('recorded', {
        header: 'Recording',
        // Says why not, not only that: no terminal, a failed sign-in and recording turned off read differently.
        cell: (ctx) => {
          const s = ctx.row.original;
          return s.recorded ? (
            <span className="badge badge-accent">Recorded</span>
          ) : (
            <span className="muted" title={(recordingState(s) as { text?: string }).text}>
              {recordingLabel(s)}
            </span>
          );
        },
      }),
      column.accessor('started_at', {
        header: 'Started',
        cell: (ctx) => <span title={formatDate(ctx.getValue())}>{formatRelative(ctx.getValue())}</span>,
      }),
      column.display({
        id: 'duration',
        header: 'Duration',
        cell: (ctx) => formatDuration(timing(ctx.row.original).durationMs),
      }),
      column.display({
        id: 'open',
        header: () => <span className="sr-only">Details</span>,
        cell: (ctx) => {
          const s = ctx.row.original;
          return (
            <Link
              to={`/sessions/${s.uid}`}
              aria-label={`Details of the session of ${s.username} on ${s.device?.name ?? s.device_uid.slice(0, 12)}, started ${formatDate(s.started_at)}`}
            >
              Details
            </Link>
          );
        },
      }),
    ],
    [column],
  );
  // react-table caches cell values per row object, so the looked-up names and links go into new row objects.
  const page = useMemo(() => {
    if (!sessions.data) return undefined;
    const known = found.data ?? {};
    return {
      ...sessions.data,
      items: sessions.data.items.map((s) => {
        const device = known[s.device_uid];
        if (!device) return s;
        return {
          ...s,
          devicePath: device.path,
          device: s.device ?? ({ uid: s.device_uid, name: device.name } as Device),
        };
      }),
    };
  }, [sessions.data, found.data]);
  return (
    <>
      <PageHeader title="Sessions" description="Every SSH and web terminal connection through the gateway." />
      <Card>
        <DataTable
          label="Sessions"
          columns={columns}
          {...sessionsTable}
          page={page}
          rowKey={(s) => s.uid}
          empty={
            <Empty title="No sessions yet" icon={icons.sessions}>
              Connections to your devices, from ssh or the web terminal, are listed here.
            </Empty>
          }
        />
      </Card>
    </>
  );
}
