/**
 * The namespace the store benchmarks list (`models.ts`, `paired-lists.ts`): 100,000 devices seeded straight into the
 * database, and the device-list calls the goals name.
 */
import pg from 'pg';

/**
 * 100,000 devices in the namespace, 90 % accepted and every tenth pending (the mix of the device-list goals), written in one statement
 * (the list reads them, nothing else).
 */
export async function seedDevices(databaseUrl: string, tenant: string, n: number): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(
      `insert into devices (uid, tenant_id, name, identity, info, public_key, hostname, status, last_seen, tags)
       select 'f' || lpad(to_hex(i), 63, '0'), $1, 'dev-' || i,
              jsonb_build_object('mac', '02:00:00:00:00:00'),
              '{"id":"debian","pretty_name":"Debian GNU/Linux 12","version":"0.2.0","arch":"amd64","platform":"native"}',
              'seeded', 'dev-' || i, case when i % 10 = 0 then 'pending' else 'accepted' end,
              now() - (i || ' seconds')::interval,
              case when i % 2 = 0 then array['prod'] else array['lab', 'edge'] end
       from generate_series(1, $2::int) as i`,
      [tenant, n],
    );
    await client.query('analyze devices');
    // A fifth of them have since made their availability call, as agents do: the list reads a table with the dead
    // row versions (and, where last_seen is indexed, index entries) that leaves until autovacuum comes by.
    await client.query(
      `update devices set last_seen = now() where tenant_id = $1 and right(uid, 1) in ('0', '5', 'a')`,
      [tenant],
    );
  } finally {
    await client.end();
  }
}

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');

/** The device-list calls measured, as [figure name, path and query]. */
export function deviceLists(): [string, string][] {
  return [
    ['device list, first page (10, last_seen desc)', '/api/devices'],
    [
      'device list, page 500 of 100 by name asc',
      '/api/devices?page=500&per_page=100&sort_by=name&order_by=asc',
    ],
    [
      'device list, filter name contains',
      `/api/devices?filter=${encodeURIComponent(b64([{ type: 'property', params: { name: 'name', operator: 'contains', value: 'dev-42' } }]))}`,
    ],
    [
      'device list, tag filter sorted by name',
      `/api/devices?sort_by=name&order_by=asc&filter=${encodeURIComponent(b64([{ type: 'property', params: { name: 'tags', operator: 'contains', value: 'lab' } }]))}`,
    ],
    ['device list, pending', '/api/devices?status=pending'],
  ];
}
