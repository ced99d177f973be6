/**
 * What the store's models cost where it matters: boot time, the device list of a namespace holding
 * 100,000 devices, and the agent's availability call. Each checkout given runs as its own server process
 * (`node <checkout>/bin/gatehouse.js serve`) on a fresh PostgreSQL database, in interleaved rounds, so a before
 * and an after are measured in one run on the same machine load.
 *
 *   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
 *     node --import tsx bench/store/models.ts [--rounds 3] [--devices 100000] [--profile DIR] [checkout ...]
 *
 * With no checkout named, only this one is measured. `--profile DIR` runs each server with `--cpu-prof` into DIR
 * (one profile per server process, written when it exits). A checkout needs its node_modules (`cp -al` of this one's
 * will do for a commit of the same lockfile).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { agentAuthRequest } from '../../test/support/device-keys';
import { dropDatabase, freshDatabase } from '../../test/support/server';
import { dropJsonFlag, writeFigures } from '../figures';
import { freePort, percentile, signUp, startCheckout, stopCheckout } from './checkout-server';
import { deviceLists, seedDevices } from './device-lists';

const args = process.argv.slice(2);
function option(name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const [value] = args.splice(i, 2).slice(1);
  return Number(value);
}
dropJsonFlag(args);
function textOption(name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i < 0 ? undefined : args.splice(i, 2)[1];
}
const profileDir = textOption('profile');
const profileArgs = profileDir ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(profileDir)] : [];
const rounds = option('rounds', 3);
const deviceCount = option('devices', 100_000);
const checkouts = args.length ? args.map((a) => path.resolve(a)) : [path.resolve('.')];
const LIST_CALLS = Number(process.env.LIST_CALLS ?? 40);
const AUTH_DEVICES = 100;
const AUTH_CALLS = Number(process.env.AUTH_CALLS ?? 500);

type Series = Record<string, number[]>;
const results = new Map<string, Series>();
function record(checkout: string, name: string, values: number[]): void {
  const series = results.get(checkout) ?? {};
  results.set(checkout, series);
  series[name] = [...(series[name] ?? []), ...values];
}

async function timed(n: number, call: () => Promise<void>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await call();
    out.push(performance.now() - t);
  }
  return out;
}

async function measure(checkout: string): Promise<void> {
  const databaseUrl = await freshDatabase();
  if (!databaseUrl) throw new Error('set TEST_DATABASE_URL: the figures are for PostgreSQL');
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gatehouse-bench-models-'));
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
    GATEHOUSE_REGISTRATIONS_PER_MINUTE: '1000000',
    GATEHOUSE_PENDING_DEVICES: '1000000',
    // Every registration comes from 127.0.0.1: the per-source and per-block bounds of keyless pending devices.
    GATEHOUSE_PENDING_PER_SOURCE: '1000000',
    GATEHOUSE_PENDING_PER_BLOCK: '1000000',
  };
  let server: ChildProcess | undefined;
  try {
    const first = await startCheckout(checkout, env, url, profileArgs);
    server = first.child;
    record(checkout, 'boot, fresh database (migrations) ms', [first.ms]);

    const login = await signUp(checkout, env, url);
    const tenant = login.tenant;
    const auth = { authorization: `Bearer ${login.token}` };
    await seedDevices(databaseUrl, tenant, deviceCount);

    const lists = deviceLists();
    for (const [name, p] of lists) {
      const check = await fetch(url + p, { headers: auth });
      if (!check.ok || Number(check.headers.get('x-total-count')) < 1)
        throw new Error(`${p} answered ${check.status} total ${check.headers.get('x-total-count')}`);
      await check.arrayBuffer();
      await timed(10, async () => void (await (await fetch(url + p, { headers: auth })).arrayBuffer()));
      record(
        checkout,
        `${name} ms`,
        await timed(LIST_CALLS, async () => {
          const res = await fetch(url + p, { headers: auth });
          await res.arrayBuffer();
          if (!res.ok) throw new Error(`${p} answered ${res.status}`);
        }),
      );
    }

    // The availability call of known devices (the path every agent takes every 30 s).
    const agents = Array.from({ length: AUTH_DEVICES }, (_, i) => ({
      tenant,
      hostname: `agent-${i}`,
      mac: `02:00:00:00:${(i >> 8).toString(16).padStart(2, '0')}:${(i & 255).toString(16).padStart(2, '0')}`,
      keyLabel: `bench-models-${i}`,
    }));
    const authCall = async (i: number) => {
      const req = agentAuthRequest(agents[i % agents.length] as (typeof agents)[number]);
      const t = performance.now();
      const res = await fetch(`${url}/api/devices/auth`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...req.headers },
        body: JSON.stringify(req.body),
      });
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`auth answered ${res.status}`);
      return performance.now() - t;
    };
    for (let i = 0; i < AUTH_DEVICES; i++) await authCall(i);
    const authTimes: number[] = [];
    for (let i = 0; i < AUTH_CALLS; i++) authTimes.push(await authCall(i));
    record(checkout, 'agent auth, known device ms', authTimes);

    await stopCheckout(server);
    server = undefined;
    const again = await startCheckout(checkout, env, url, profileArgs);
    server = again.child;
    record(checkout, 'boot, restart ms', [again.ms]);
  } finally {
    if (server) await stopCheckout(server);
    await dropDatabase(databaseUrl);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main() {
  for (let r = 0; r < rounds; r++) {
    // Alternate which checkout goes first, so neither always meets a warmer database server.
    const order = r % 2 === 0 ? checkouts : [...checkouts].reverse();
    for (const checkout of order) {
      console.error(`round ${r + 1}/${rounds}: ${checkout}`);
      await measure(checkout);
    }
  }
  const names = Object.keys(results.get(checkouts[0] as string) ?? {});
  console.log(`| figure | ${checkouts.map((c) => `${path.basename(c)} p50 / p99 (n)`).join(' | ')} |`);
  console.log(`|---|${checkouts.map(() => '---').join('|')}|`);
  for (const name of names) {
    const cells = checkouts.map((c) => {
      const xs = [...(results.get(c)?.[name] ?? [])].sort((a, b) => a - b);
      return `${percentile(xs, 50).toFixed(1)} / ${percentile(xs, 99).toFixed(1)} (${xs.length})`;
    });
    console.log(`| ${name} | ${cells.join(' | ')} |`);
  }
  // The first checkout's figures (the only one when none is named).
  const first = results.get(checkouts[0] as string) ?? {};
  writeFigures({
    devices: deviceCount,
    series: Object.fromEntries(
      Object.entries(first).map(([name, values]) => {
        const xs = [...values].sort((a, b) => a - b);
        return [name, { p50: percentile(xs, 50), p99: percentile(xs, 99), n: xs.length }];
      }),
    ),
  });
}

await main();
