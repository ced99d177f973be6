import {
  Button,
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
  useCan,
  usePagedList,
  useResource,
  useUser,
} from '@gatehouse/console';
import { useEffect, useId, useMemo, useState } from 'react';
import { calls } from '../api';
import { useDebounced } from '../devices/list';
import type { Device, Session } from '../types';
import { CloseSessionDialog } from './close';
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

interface Filters {
  username: string;
  device: string;
  active: boolean;
  /** Days as a date input gives them (YYYY-MM-DD), read in the person's time zone. */
  from: string;
  to: string;
}

const noFilters: Filters = { username: '', device: '', active: false, from: '', to: '' };

/** The list call's filters: the range runs from the start of `from` to the end of `to`, both local days. */
function filterQuery(f: Filters): { query: Record<string, string | boolean>; problem: string | null } {
  const query: Record<string, string | boolean> = {};
  if (f.username.trim()) query.username = f.username.trim();
  if (f.device) query.device_uid = f.device;
  if (f.active) query.active = true;
  const from = f.from ? new Date(`${f.from}T00:00:00`) : undefined;
  const to = f.to ? new Date(`${f.to}T00:00:00`) : undefined;
  if (to) to.setDate(to.getDate() + 1);
  if ((from && Number.isNaN(from.getTime())) || (to && Number.isNaN(to.getTime())))
    return { query, problem: 'Give dates as a day, month and year.' };
  if (from && to && from >= to) return { query, problem: 'The first day is after the last day.' };
  if (from) query.started_after = from.toISOString();
  if (to) query.started_before = to.toISOString();
  return { query, problem: null };
}

function SessionFilters({
  filters,
  onChange,
  problem,
}: {
  filters: Filters;
  onChange: (f: Filters) => void;
  problem: string | null;
}) {
  const api = useApi();
  const user = useUser();
  const devices = useResource(
    () => api.page<Device>(calls.listDevices, { query: { page: 1, per_page: 100 } }),
    [api, user.tenant],
  );
  const set = (patch: Partial<Filters>) => onChange({ ...filters, ...patch });
  const field = { gap: 6, flexWrap: 'nowrap' } as const;
  const id = useId();
  return (
    <search className="toolbar" aria-label="Filter sessions">
      <span className="row" style={field}>
        <label className="muted" htmlFor={`${id}-user`}>
          User
        </label>
        <input
          id={`${id}-user`}
          className="input"
          type="search"
          placeholder="e.g. root"
          value={filters.username}
          onChange={(e) => set({ username: e.target.value })}
        />
      </span>
      <span className="row" style={field}>
        <label className="muted" htmlFor={`${id}-device`}>
          Device
        </label>
        <select
          id={`${id}-device`}
          className="input"
          value={filters.device}
          onChange={(e) => set({ device: e.target.value })}
        >
          <option value="">All devices</option>
          {(devices.data?.items ?? []).map((d) => (
            <option key={d.uid} value={d.uid}>
              {d.name}
            </option>
          ))}
        </select>
      </span>
      <label className="row" style={field}>
        <input type="checkbox" checked={filters.active} onChange={(e) => set({ active: e.target.checked })} />
        Active only
      </label>
      <span className="row" style={field}>
        <label className="muted" htmlFor={`${id}-from`}>
          From
        </label>
        <input
          id={`${id}-from`}
          className="input"
          type="date"
          value={filters.from}
          onChange={(e) => set({ from: e.target.value })}
        />
      </span>
      <span className="row" style={field}>
        <label className="muted" htmlFor={`${id}-to`}>
          To
        </label>
        <input
          id={`${id}-to`}
          className="input"
          type="date"
          value={filters.to}
          onChange={(e) => set({ to: e.target.value })}
        />
      </span>
      {JSON.stringify(filters) !== JSON.stringify(noFilters) ? (
        <Button size="sm" variant="ghost" onClick={() => onChange(noFilters)}>
          Clear filters
        </Button>
      ) : null}
      {problem ? (
        <span className="field">
          <span className="error" role="alert">
            {problem}
          </span>
        </span>
      ) : null}
    </search>
  );
}

export function SessionsPage() {
  const api = useApi();
  const user = useUser();
  const [filters, setFilters] = useState<Filters>(noFilters);
  const typed = useDebounced(filters.username, 250);
  const { query: filter, problem } = filterQuery({ ...filters, username: typed });
  const filterKey = JSON.stringify(filter);
  const filtered = filterKey !== '{}';
  const [closing, setClosing] = useState<Session | null>(null);
  // Shown only to roles the server's table lets close a session.
  const mayClose = useCan()(calls.closeSession).allowed;
  const {
    setQuery,
    list: sessions,
    table: sessionsTable,
  } = usePagedList(
    (query) =>
      api.page<Session>(calls.listSessions, {
        query: { ...filter, page: query.page, per_page: query.perPage },
      }),
    [api, user.tenant, filterKey],
  );
  useEffect(() => setQuery((q) => ({ ...q, page: 1 })), [filterKey]);
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
          const state = recordingState(s);
          return state.recorded ? (
            <span className="badge badge-accent">Recorded</span>
          ) : (
            <span className="muted" title={state.text}>
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
          const what = `the session of ${s.username} on ${s.device?.name ?? s.device_uid.slice(0, 12)}, started ${formatDate(s.started_at)}`;
          return (
            <div className="row" style={{ justifyContent: 'flex-end', gap: 6, flexWrap: 'nowrap' }}>
              {s.active && mayClose ? (
                <Button size="sm" variant="ghost" onClick={() => setClosing(s)} aria-label={`Close ${what}`}>
                  Close
                </Button>
              ) : null}
              <Link to={`/sessions/${s.uid}`} aria-label={`Details of ${what}`}>
                Details
              </Link>
            </div>
          );
        },
      }),
    ],
    [column, mayClose],
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
        <SessionFilters filters={filters} onChange={setFilters} problem={problem} />
        <DataTable
          label="Sessions"
          columns={columns}
          {...sessionsTable}
          page={page}
          rowKey={(s) => s.uid}
          empty={
            filtered ? (
              <Empty title="No sessions match these filters" icon={icons.sessions}>
                Change or clear the filters to see more sessions.
              </Empty>
            ) : (
              <Empty title="No sessions yet" icon={icons.sessions}>
                Connections to your devices, from ssh or the web terminal, are listed here.
              </Empty>
            )
          }
        />
      </Card>
      <CloseSessionDialog session={closing} onClose={() => setClosing(null)} onClosed={sessions.reload} />
    </>
  );
}
