import {
  Card,
  CopyField,
  ErrorState,
  Link,
  Loading,
  PageHeader,
  type Stats,
  useApi,
  useConsole,
  useResource,
  useUser,
} from '@gatehouse/web/shell';

const tiles: { key: keyof Stats; label: string; to: string }[] = [
  { key: 'registered_devices', label: 'Accepted devices', to: '/devices' },
  { key: 'online_devices', label: 'Online now', to: '/devices' },
  { key: 'pending_devices', label: 'Waiting for approval', to: '/devices/pending' },
  { key: 'rejected_devices', label: 'Rejected', to: '/devices/rejected' },
  { key: 'active_sessions', label: 'Active sessions', to: '/sessions' },
];

export function HomePage() {
  const api = useApi();
  const user = useUser();
  const { info } = useConsole();
  const stats = useResource(
    () => api.call<Stats>('stats', { context: 'Could not load the statistics' }),
    [api, user.tenant],
  );
  const serverUrl = `${window.location.protocol}//${info.endpoints.api || window.location.host}`;
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
        <div className="grid-2">
          <Card title="Add a device">
            <div className="card-body stack" style={{ gap: 10 }}>
              <p className="muted">
                Run the agent on a Linux machine with this namespace's tenant ID. The device then shows up
                under Pending for you to accept.
              </p>
              <span className="label">Tenant ID</span>
              <CopyField label="tenant ID" value={user.tenant} />
              <span className="label">Server address</span>
              <CopyField label="server address" value={serverUrl} />
            </div>
          </Card>
          <Card title="Connect">
            <div className="card-body stack" style={{ gap: 10 }}>
              <p className="muted">Reach any accepted device with your usual tools through the gateway:</p>
              <CopyField
                label="ssh address form"
                value={`ssh <user>@<namespace>.<device>@${(info.endpoints.ssh || '').split(':')[0] || window.location.hostname} -p ${(info.endpoints.ssh || '').split(':')[1] || '2222'}`}
              />
              <p className="muted">Or open a terminal in the browser from a device's page.</p>
            </div>
          </Card>
        </div>
      </div>
    </>
  );
}
