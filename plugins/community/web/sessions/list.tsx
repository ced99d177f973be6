import {
  Card,
  createColumnHelper,
  DataTable,
  type Device,
  Empty,
  formatDate,
  formatRelative,
  icons,
  Link,
  PageHeader,
  type Session,
  useApi,
  useResource,
  useTableQuery,
  useUser,
} from '@gatehouse/web/shell';
import { useMemo } from 'react';

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
  const [query, setQuery] = useTableQuery();
  const sessions = useResource(
    () => api.page<Session>('listSessions', { query: { page: query.page, per_page: query.perPage } }),
    [api, query.page, query.perPage, user.tenant],
  );
  // SPEC.md gives each session its device "when it still exists"; when the answer leaves it out, the names
  // are looked up once per page, so a person reads device names rather than uids.
  const missing = [
    ...new Set((sessions.data?.items ?? []).filter((s) => !s.device).map((s) => s.device_uid)),
  ];
  const names = useResource(async () => {
    const found: Record<string, string> = {};
    await Promise.all(
      missing.map(async (uid) => {
        for (const call of ['getDevice', 'getContainer'] as const) {
          try {
            found[uid] = (await api.call<Device>(call, { params: { uid } })).name;
            return;
          } catch {
            // Not of this kind (or removed): try the other list, else keep the short uid.
          }
        }
      }),
    );
    return found;
  }, [api, missing.join(',')]);
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
        cell: (ctx) => <Link to={`/sessions/${ctx.row.original.uid}`}>{ctx.getValue()}</Link>,
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
        cell: (ctx) =>
          ctx.getValue() ? (
            <span className="badge badge-accent">Recorded</span>
          ) : (
            <span className="faint">—</span>
          ),
      }),
      column.accessor('started_at', {
        header: 'Started',
        cell: (ctx) => <span title={formatDate(ctx.getValue())}>{formatRelative(ctx.getValue())}</span>,
      }),
    ],
    [column],
  );
  // react-table caches cell values per row object, so the looked-up names go into new row objects.
  const page = useMemo(() => {
    if (!sessions.data) return undefined;
    const known = names.data ?? {};
    return {
      ...sessions.data,
      items: sessions.data.items.map((s) => {
        const name = known[s.device_uid];
        return s.device || !name ? s : { ...s, device: { uid: s.device_uid, name } as Device };
      }),
    };
  }, [sessions.data, names.data]);
  return (
    <>
      <PageHeader title="Sessions" description="Every SSH and web terminal connection through the gateway." />
      <Card>
        <DataTable
          label="Sessions"
          columns={columns}
          page={page}
          loading={sessions.loading}
          error={sessions.error}
          onRetry={sessions.reload}
          query={query}
          onQuery={setQuery}
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
