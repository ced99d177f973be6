import { Button, Card, ErrorState, Loading, PageHeader, useApi, useResource } from '@gatehouse/console';
import { calls } from '../api';
import type { Health } from '../types';

const mib = (bytes: number) => `${Math.round(bytes / 2 ** 20)} MiB`;

function duration(seconds: number): string {
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  return d ? `${d} d ${h} h` : h ? `${h} h ${m} min` : `${m} min ${seconds % 60} s`;
}

/** Instance, Health: the server's version, uptime, store, cache and counts. */
export function InstanceHealthPage() {
  const api = useApi();
  const health = useResource(() => api.call<Health>(calls.adminHealth), [api]);
  const h = health.data;
  const rows: [string, string][] = h
    ? [
        ['Version', `${h.version} (${h.edition} edition)`],
        ['Up for', duration(h.uptime_seconds)],
        [
          'Store',
          `${h.store.kind === 'embedded' ? 'embedded (PGlite in the data directory)' : 'PostgreSQL'}: ${h.store.ok ? `answers in ${h.store.ms} ms` : 'does not answer'}`,
        ],
        ['Counters', h.cache.kind === 'redis' ? 'Redis' : 'in this process (one server)'],
        ['Users', `${h.users}${h.disabled_users ? `, ${h.disabled_users} disabled` : ''}`],
        ['Namespaces', String(h.namespaces)],
        ['Devices', `${h.devices.accepted} accepted, ${h.devices.pending} pending`],
        ['Memory', `${mib(h.memory.rss_bytes)} resident, ${mib(h.memory.heap_used_bytes)} heap`],
        ['Listening', `HTTP ${h.listeners.http}, SSH ${h.listeners.ssh}`],
      ]
    : [];
  return (
    <>
      <PageHeader
        title="Health"
        description="This server as it is now."
        actions={
          <Button onClick={health.reload} disabled={health.loading}>
            Refresh
          </Button>
        }
      />
      <Card>
        {health.error ? (
          <ErrorState message={health.error} onRetry={health.reload} />
        ) : !h ? (
          <Loading />
        ) : (
          <div className="card-body">
            <dl className="props" data-health>
              {rows.map(([k, v]) => [<dt key={`${k}-t`}>{k}</dt>, <dd key={`${k}-d`}>{v}</dd>])}
            </dl>
          </div>
        )}
      </Card>
    </>
  );
}
