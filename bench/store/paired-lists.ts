/**
 * The device list of two checkouts, call by call: both servers run at once (each its own process, its own fresh
 * database with the same 100,000 devices), and every call to one is followed by the same call to the other, the
 * order swapped each time. A change in the machine's load then falls on both alike, so a difference of a fraction of
 * a millisecond shows on a busy machine, where the figures of `models.ts` (one checkout after the other) move more
 * than that between runs.
 *
 *   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
 *     node --import tsx bench/store/paired-lists.ts [--calls 400] [--devices 100000] BEFORE AFTER
 *
 * Printed per list: each checkout's p50 and p99, the median of the per-pair ratios AFTER / BEFORE with the range of
 * its middle 95 % over bootstrap resamples, and each server's CPU milliseconds per call over the same calls.
 */
import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { dropDatabase } from '../../test/support/server';
import { cpuMs } from '../cpu-time';
import { dropJsonFlag, writeFigures } from '../figures';
import { percentile, serverPlace, signUp, startCheckout, stopCheckout } from './checkout-server';
import { deviceLists, seedDevices } from './device-lists';

const args = process.argv.slice(2);
function option(name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  if (i < 0) return fallback;
  return Number(args.splice(i, 2)[1]);
}
dropJsonFlag(args);
const calls = option('calls', 400);
const deviceCount = option('devices', 100_000);
if (args.length !== 2) throw new Error('name two checkouts: BEFORE AFTER');
const checkouts = args.map((a) => path.resolve(a)) as [string, string];

interface Running {
  checkout: string;
  child: ChildProcess;
  url: string;
  auth: Record<string, string>;
  databaseUrl: string;
  dataDir: string;
}

async function start(checkout: string): Promise<Running> {
  const { databaseUrl, dataDir, url, env } = await serverPlace('gatehouse-bench-paired-');
  const { child } = await startCheckout(checkout, env, url);
  const login = await signUp(checkout, env, url);
  await seedDevices(databaseUrl, login.tenant, deviceCount);
  return { checkout, child, url, auth: { authorization: `Bearer ${login.token}` }, databaseUrl, dataDir };
}

async function timedCall(server: Running, p: string): Promise<number> {
  const t = performance.now();
  const res = await fetch(server.url + p, { headers: server.auth });
  await res.arrayBuffer();
  if (!res.ok) throw new Error(`${server.checkout} ${p} answered ${res.status}`);
  return performance.now() - t;
}

/** A seeded pseudo-random sequence, so the bootstrap gives the same range for the same figures. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const median = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );

function bootstrapMedian(ratios: number[]): [number, number] {
  const next = random(33);
  const medians: number[] = [];
  for (let r = 0; r < 1000; r++)
    medians.push(
      median(
        Array.from({ length: ratios.length }, () => ratios[Math.floor(next() * ratios.length)] as number),
      ),
    );
  medians.sort((a, b) => a - b);
  return [percentile(medians, 2.5), percentile(medians, 97.5)];
}

async function main() {
  const servers: Running[] = [];
  try {
    for (const c of checkouts) servers.push(await start(c));
    const [before, after] = servers as [Running, Running];
    const figures: Record<string, unknown> = {};
    console.log(
      `| list | ${path.basename(before.checkout)} p50 / p99 ms | ${path.basename(after.checkout)} p50 / p99 ms | ` +
        'after / before, median of pairs (95 % range) | server CPU ms per call, before / after |',
    );
    console.log('|---|---|---|---|---|');
    for (const [name, p] of deviceLists()) {
      for (let i = 0; i < 20; i++) for (const s of servers) await timedCall(s, p);
      const times: [number[], number[]] = [[], []];
      const cpu0 = servers.map((s) => cpuMs(s.child.pid as number));
      for (let i = 0; i < calls; i++) {
        const order = i % 2 === 0 ? [0, 1] : [1, 0];
        for (const k of order) times[k as 0 | 1].push(await timedCall(servers[k] as Running, p));
      }
      const cpu = servers.map((s, k) => (cpuMs(s.child.pid as number) - (cpu0[k] as number)) / calls);
      const ratios = times[1].map((t, i) => t / (times[0][i] as number));
      const ratio = median(ratios);
      const [low, high] = bootstrapMedian(ratios);
      const cell = (xs: number[]) => {
        const sorted = [...xs].sort((a, b) => a - b);
        return `${percentile(sorted, 50).toFixed(2)} / ${percentile(sorted, 99).toFixed(1)}`;
      };
      console.log(
        `| ${name} | ${cell(times[0])} | ${cell(times[1])} | ${ratio.toFixed(3)} (${low.toFixed(3)} to ${high.toFixed(3)}) | ` +
          `${(cpu[0] as number).toFixed(2)} / ${(cpu[1] as number).toFixed(2)} |`,
      );
      figures[name] = { ratio, low, high, cpuBefore: cpu[0], cpuAfter: cpu[1] };
    }
    writeFigures({ devices: deviceCount, calls, lists: figures });
  } finally {
    for (const s of servers) {
      await stopCheckout(s.child);
      await dropDatabase(s.databaseUrl);
      rmSync(s.dataDir, { recursive: true, force: true });
    }
  }
}

await main();
