/**
 * What an API call costs before its own work: `GET /info` (one small query, no caller), an authenticated list that
 * finds nothing, and the first page of a namespace of 100,000 devices, each timed from one keep-alive connection
 * (node's http client) and from `fetch`, whose own cost on the client is part of what `models.ts` reports. Each
 * checkout named runs as its own server process (`node <checkout>/bin/gatehouse.js serve`) on a fresh PostgreSQL
 * database, one after another, in rounds.
 *
 *   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
 *     node --import tsx bench/store/request-floor.ts [--rounds 2] [--calls 400] [checkout ...]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { dropDatabase, freshDatabase } from '../../test/support/server';
import { freePort, percentile, signUp, startCheckout, stopCheckout } from './checkout-server';

const args = process.argv.slice(2);
function option(name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  return i < 0 ? fallback : Number(args.splice(i, 2)[1]);
}
const rounds = option('rounds', 2);
const calls = option('calls', 400);
const checkouts = args.length ? args.map((a) => path.resolve(a)) : [path.resolve('.')];

const cases: { name: string; path: string; auth: boolean }[] = [
  { name: '/info', path: '/info', auth: false },
  { name: 'empty list (status=removed)', path: '/api/devices?status=removed', auth: true },
  { name: 'first page of 100,000 devices', path: '/api/devices', auth: true },
];

/** Series by checkout, then by case and client. */
const results = new Map<string, Map<string, number[]>>();
function record(checkout: string, name: string, values: number[]): void {
  const series = results.get(checkout) ?? new Map<string, number[]>();
  results.set(checkout, series);
  series.set(name, [...(series.get(name) ?? []), ...values]);
}

async function measure(checkout: string): Promise<void> {
  const databaseUrl = await freshDatabase();
  if (!databaseUrl) throw new Error('set TEST_DATABASE_URL: the figures are for PostgreSQL');
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gatehouse-bench-floor-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    GATEHOUSE_DATABASE_URL: databaseUrl,
    GATEHOUSE_DATA_DIR: dataDir,
    GATEHOUSE_HTTP_PORT: String(port),
    GATEHOUSE_SSH_PORT: String(await freePort()),
    GATEHOUSE_LOG_LEVEL: 'warn',
  };
  const { child: server } = await startCheckout(checkout, env, url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const login = await signUp(checkout, env, url);
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await client.query(
      `insert into devices (uid, tenant_id, name, identity, info, public_key, hostname, status, last_seen, tags)
       select 'f' || lpad(to_hex(i), 63, '0'), $1, 'dev-' || i, jsonb_build_object('mac', '02:00:00:00:00:00'),
              '{"id":"debian","pretty_name":"Debian GNU/Linux 12","version":"0.2.0","arch":"amd64","platform":"native"}',
              'seeded', 'dev-' || i, case when i % 10 = 0 then 'pending' else 'accepted' end,
              now() - (i || ' seconds')::interval, array['prod']
       from generate_series(1, 100000) as i`,
      [login.tenant],
    );
    await client.query('analyze devices');
    await client.end();

    const headers = (auth: boolean): Record<string, string> =>
      auth
        ? { authorization: `Bearer ${login.token}`, 'accept-encoding': 'gzip' }
        : { 'accept-encoding': 'gzip' };
    const keptAlive = (p: string, auth: boolean) =>
      new Promise<void>((resolve, reject) => {
        http
          .get(url + p, { agent, headers: headers(auth) }, (res) => {
            res.resume();
            res.on('end', () =>
              (res.statusCode ?? 500) < 400 ? resolve() : reject(new Error(`${p}: ${res.statusCode}`)),
            );
          })
          .on('error', reject);
      });
    const fetched = async (p: string, auth: boolean) => {
      const res = await fetch(url + p, { headers: headers(auth) });
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`${p}: ${res.status}`);
    };
    for (const c of cases) {
      for (const [client, call] of [
        ['keep-alive http', keptAlive],
        ['fetch', fetched],
      ] as const) {
        for (let i = 0; i < 20; i++) await call(c.path, c.auth);
        const times: number[] = [];
        for (let i = 0; i < calls; i++) {
          const t = performance.now();
          await call(c.path, c.auth);
          times.push(performance.now() - t);
        }
        record(checkout, `${c.name}, ${client}`, times);
      }
    }
  } finally {
    agent.destroy();
    await stopCheckout(server);
    await dropDatabase(databaseUrl);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? checkouts : [...checkouts].reverse();
  for (const checkout of order) {
    console.error(`round ${r + 1}/${rounds}: ${checkout}`);
    await measure(checkout);
  }
}
console.log(
  `| call, client (ms) | ${checkouts.map((c) => `${path.basename(c)} p50 / p90 / p99`).join(' | ')} |`,
);
console.log(`|---|${checkouts.map(() => '---').join('|')}|`);
for (const name of results.get(checkouts[0] as string)?.keys() ?? []) {
  const cells = checkouts.map((c) => {
    const xs = [...(results.get(c)?.get(name) ?? [])].sort((a, b) => a - b);
    return [50, 90, 99].map((p) => percentile(xs, p).toFixed(1)).join(' / ');
  });
  console.log(`| ${name} | ${cells.join(' | ')} |`);
}
