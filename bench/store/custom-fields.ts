/**
 * The device list by custom fields on a namespace of 100,000 devices, each holding three fields, against the same
 * list by name in the same run: sorting and filtering by a field read the JSON column of every device of the
 * namespace (no index knows an arbitrary key), where the name has its own index.
 *
 *   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
 *     node --import tsx bench/store/custom-fields.ts [--devices 100000] [--calls 40]
 */
import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { dropDatabase } from '../../test/support/server';
import { percentile, serverPlace, signUp, startCheckout, stopCheckout } from './checkout-server';
import { seedDevices } from './device-lists';

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i < 0 ? fallback : Number(args[i + 1]);
};
const deviceCount = option('devices', 100_000);
const calls = option('calls', 40);
const b64 = (v: unknown) => encodeURIComponent(Buffer.from(JSON.stringify(v)).toString('base64'));
const prop = (name: string, operator: string, value: string) => [
  { type: 'property', params: { name, operator, value } },
];

/** [figure, path]: each custom-field call beside the name call it compares with. */
const lists: [string, string][] = [
  ['first page by name asc (baseline)', '/api/devices?sort_by=name&order_by=asc'],
  ['first page by custom_fields.owner asc', '/api/devices?sort_by=custom_fields.owner&order_by=asc'],
  ['name contains (baseline)', `/api/devices?filter=${b64(prop('name', 'contains', 'dev-42'))}`],
  ['custom_fields.owner eq', `/api/devices?filter=${b64(prop('custom_fields.owner', 'eq', 'team-7'))}`],
  [
    'custom_fields.rack contains',
    `/api/devices?filter=${b64(prop('custom_fields.rack', 'contains', 'r-12'))}`,
  ],
  ['custom field keys in use', '/api/devices/custom_fields'],
];

async function main() {
  const checkout = path.resolve('.');
  const place = await serverPlace('gatehouse-bench-fields-', {
    GATEHOUSE_REGISTRATIONS_PER_MINUTE: '1000000',
    GATEHOUSE_PENDING_DEVICES: '1000000',
  });
  let server: ChildProcess | undefined;
  try {
    server = (await startCheckout(checkout, place.env, place.url, [])).child;
    const login = await signUp(checkout, place.env, place.url);
    await seedDevices(place.databaseUrl, login.tenant, deviceCount);
    const client = new pg.Client({ connectionString: place.databaseUrl });
    await client.connect();
    await client.query(
      `update devices set custom_fields = jsonb_build_object('owner', 'team-' || (abs(hashtext(uid)) % 50),
         'rack', 'r-' || (abs(hashtext(uid)) % 400), 'asset', 'A-' || abs(hashtext(uid)))
       where tenant_id = $1`,
      [login.tenant],
    );
    await client.query('vacuum analyze devices');
    await client.end();
    const headers = { authorization: `Bearer ${login.token}` };
    const rows: string[] = [];
    let baseline = 0;
    for (const [name, p] of lists) {
      const call = async () => {
        const res = await fetch(place.url + p, { headers });
        await res.arrayBuffer();
        if (!res.ok) throw new Error(`${p} answered ${res.status}`);
      };
      for (let i = 0; i < 5; i++) await call();
      const times: number[] = [];
      for (let i = 0; i < calls; i++) {
        const t = performance.now();
        await call();
        times.push(performance.now() - t);
      }
      times.sort((a, b) => a - b);
      const p50 = percentile(times, 50);
      if (name.endsWith('(baseline)')) baseline = p50;
      rows.push(
        `| ${name} | ${p50.toFixed(1)} | ${percentile(times, 99).toFixed(1)} | ${(p50 / baseline).toFixed(2)} |`,
      );
    }
    console.log(`${deviceCount} devices, ${calls} calls each; ratio: p50 against the baseline above it`);
    console.log('| list | p50 ms | p99 ms | ratio |');
    console.log('|---|---|---|---|');
    for (const row of rows) console.log(row);
  } finally {
    if (server) await stopCheckout(server);
    await dropDatabase(place.databaseUrl);
    rmSync(place.dataDir, { recursive: true, force: true });
  }
}

await main();
