import {
  Card,
  CopyField,
  ErrorState,
  FirstNamespace,
  formatRelative,
  Link,
  Loading,
  PageHeader,
  useApi,
  useConsole,
  useResource,
  useUser,
} from '@gatehouse/console';
import { calls } from './api';
import { InstallCommands } from './devices/install';
import { sshEndpoint } from './devices/ssh-command';
import { useLiveRefresh } from './live';
import type { Device, Namespace, Session, Stats } from './types';

/** How many of the most recent sessions and devices Home lists. */
const RECENT = 5;

const tiles: { key: keyof Stats; label: string; to: string }[] = [
  { key: 'registered_devices', label: 'Accepted devices', to: '/devices' },
  { key: 'online_devices', label: 'Online now', to: '/devices' },
  { key: 'pending_devices', label: 'Waiting for approval', to: '/devices/pending' },
  { key: 'rejected_devices', label: 'Rejected', to: '/devices/rejected' },
  { key: 'active_sessions', label: 'Active sessions', to: '/sessions' },
];

/** One card of Home's recent lists: a link per item and a muted word about it; nothing when the list is empty. */
function RecentList({
  title,
  testId,
  items,
}: {
  title: string;
  testId: string;
  items: { key: string; to: string; label: string; detail: string }[];
}) {
  if (items.length === 0) return null;
  return (
    <Card title={title}>
      <ul className="card-body stack" style={{ gap: 6, listStyle: 'none', margin: 0 }} data-testid={testId}>
        {items.map((item) => (
          <li key={item.key}>
            <Link to={item.to}>{item.label}</Link> <span className="muted">{item.detail}</span>
          </li>
        ))}
      </ul>
    </Card>
  );
}

export function HomePage() {
  const api = useApi();
  const user = useUser();
  const { info } = useConsole();
  // Nothing to load without a namespace (the guide below shows instead).
  const stats = useResource(
    async () =>
      user.tenant ? api.call<Stats>(calls.stats, { context: 'Could not load the statistics' }) : undefined,
    [api, user.tenant],
  );
  // The most recently seen devices, those waiting for approval among them: a new arrival is what is easy to miss.
  const devices = useResource(async () => {
    if (!user.tenant) return undefined;
    const recent = (status: string) =>
      api.page<Device>(calls.listDevices, {
        query: { page: 1, per_page: RECENT, status, sort_by: 'last_seen', order_by: 'desc' },
      });
    const [accepted, pending] = await Promise.all([recent('accepted'), recent('pending')]);
    const items = [...pending.items, ...accepted.items]
      .sort((a, b) => Date.parse(b.last_seen) - Date.parse(a.last_seen))
      .slice(0, RECENT);
    return { items, total: accepted.total + pending.total };
  }, [api, user.tenant]);
  const sessions = useResource(
    async () =>
      user.tenant
        ? api.page<Session>(calls.listSessions, { query: { page: 1, per_page: RECENT } })
        : undefined,
    [api, user.tenant],
  );
  useLiveRefresh(stats.reload);
  useLiveRefresh(devices.reload, (e) => e.kind.startsWith('device.'));
  useLiveRefresh(sessions.reload, (e) => e.kind.startsWith('session.'));
  const namespace = useResource(
    async () =>
      user.tenant ? api.call<Namespace>(calls.getNamespace, { params: { tenant: user.tenant } }) : undefined,
    [api, user.tenant],
  );
  const { host, port } = sshEndpoint(info);
  // Signed in without any namespace (a new cloud sign-up): nothing below exists yet, so guide to the first one.
  if (!user.tenant) {
    return (
      <>
        <PageHeader title={`Welcome${user.name ? `, ${user.name.split(' ')[0]}` : ''}`} />
        <FirstNamespace />
      </>
    );
  }
  // The whole address, port included, with this namespace's real name.
  const connectForm = `ssh ${port === 22 ? '' : `-p ${port} `}<device-user>@${namespace.data?.name ?? '<namespace>'}.<device-name>@${host}`;
  return (
    <>
      <PageHeader
        title={`Welcome${user.name ? `, ${user.name.split(' ')[0]}` : ''}`}
        description="An overview of this namespace."
      />
      <div className="stack">
        {stats.error ? (
          <Card>
            <ErrorState message={stats.error} onRetry={stats.reload} />
          </Card>
        ) : !stats.data ? (
          <Loading />
        ) : (
          <div className="grid-stats">
            {tiles.map((t) => (
              <Link
                key={t.key}
                to={t.to}
                className="card stat"
                style={{ color: 'inherit', textDecoration: 'none' }}
              >
                <div className="stat-label">{t.label}</div>
                <div className="value">{stats.data?.[t.key] ?? 0}</div>
              </Link>
            ))}
          </div>
        )}
        {(devices.data?.items.length ?? 0) > 0 || (sessions.data?.items.length ?? 0) > 0 ? (
          <div className="grid-2">
            <RecentList
              title="Recent devices"
              testId="recent-devices"
              items={(devices.data?.items ?? []).map((d) => ({
                key: d.uid,
                to: `/device/${d.uid}`,
                label: d.name,
                detail: d.status === 'accepted' ? (d.online ? 'online' : 'offline') : d.status,
              }))}
            />
            <RecentList
              title="Recent sessions"
              testId="recent-sessions"
              items={(sessions.data?.items ?? []).map((s) => ({
                key: s.uid,
                to: `/sessions/${s.uid}`,
                label: `${s.username} on ${s.device?.name ?? s.device_uid.slice(0, 8)}`,
                detail: `${s.active ? 'active' : 'ended'}, ${formatRelative(s.started_at)}`,
              }))}
            />
          </div>
        ) : null}
        <div className="grid-2">
          <Card title="Add a device">
            <div className="card-body stack" style={{ gap: 10 }}>
              <p className="muted">
                Install the agent on the machine you want to reach. It registers with this namespace (tenant
                ID <code>{user.tenant}</code>).
              </p>
              <InstallCommands tenant={user.tenant} />
            </div>
          </Card>
          <Card title="Connect">
            <div className="card-body stack" style={{ gap: 10 }}>
              <p className="muted">Reach any accepted device with your usual tools through the gateway:</p>
              <CopyField label="ssh address form" value={connectForm} wrap />
              <p className="muted">
                Replace <code>&lt;device-user&gt;</code> with an account on the device and{' '}
                <code>&lt;device-name&gt;</code> with the device's name. Or open a terminal in the browser
                from a device's page.
              </p>
            </div>
          </Card>
        </div>
      </div>
    </>
  );
}
