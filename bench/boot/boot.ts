/**
 * Boot time to the first `GET /info` answer, as a user starts the server (`node bin/gatehouse.js serve`), on the
 * embedded store (first run, which initialises PGlite, and a restart) and on PostgreSQL (fresh database, restart).
 * Usage: node --import tsx bench/boot/boot.ts [runs] [--against <checkout>]
 * With --against, each run boots the other checkout (built, with its node_modules) right after this one, in the
 * same order, and the table gives this checkout's median over the other's: a before/after in one run.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { dropDatabase, freshDatabase } from '../../test/support/server';
import { cpuMs } from '../cpu-time';

const args = process.argv.slice(2);
const againstAt = args.indexOf('--against');
const against = againstAt >= 0 ? args.splice(againstAt, 2)[1] : undefined;
const runs = Number(args[0] ?? 3);
const bins: Record<string, string> = { this: path.resolve('bin/gatehouse.js') };
if (against) bins.other = path.resolve(against, 'bin/gatehouse.js');

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Milliseconds to the first `/info` answer, and the CPU milliseconds the server had used by then. */
async function bootOnce(bin: string, env: NodeJS.ProcessEnv): Promise<{ ms: number; cpu: number }> {
  const http = await freePort();
  const ssh = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [bin, 'serve'], {
    env: {
      PATH: process.env.PATH,
      ...env,
      GATEHOUSE_HTTP_PORT: String(http),
      GATEHOUSE_SSH_PORT: String(ssh),
      GATEHOUSE_LOG_LEVEL: 'warn',
    },
    stdio: 'ignore',
  });
  try {
    for (;;) {
      try {
        const res = await fetch(`http://127.0.0.1:${http}/info`);
        if (res.ok) return { ms: performance.now() - started, cpu: cpuMs(child.pid as number) };
      } catch {
        // not listening yet
      }
      if (performance.now() - started > 60_000) throw new Error('server did not answer /info within 60 s');
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

async function main() {
  const cases = ['embedded, first run', 'embedded, restart', 'postgresql, first run', 'postgresql, restart'];
  type Boots = Record<string, { ms: number; cpu: number }[]>;
  const results: Record<string, Boots> = {};
  for (const name of Object.keys(bins)) results[name] = Object.fromEntries(cases.map((c) => [c, []]));
  process.env.TEST_DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/postgres';
  for (let i = 0; i < runs; i++) {
    for (const [name, bin] of Object.entries(bins)) {
      const r = results[name] as Boots;
      const dir = mkdtempSync(path.join(tmpdir(), 'gh-boot-'));
      r['embedded, first run']?.push(await bootOnce(bin, { GATEHOUSE_DATA_DIR: dir }));
      r['embedded, restart']?.push(await bootOnce(bin, { GATEHOUSE_DATA_DIR: dir }));
      rmSync(dir, { recursive: true, force: true });
      const url = await freshDatabase();
      const pgDir = mkdtempSync(path.join(tmpdir(), 'gh-boot-'));
      const pg = { GATEHOUSE_DATA_DIR: pgDir, GATEHOUSE_DATABASE_URL: url };
      r['postgresql, first run']?.push(await bootOnce(bin, pg));
      r['postgresql, restart']?.push(await bootOnce(bin, pg));
      await dropDatabase(url);
      rmSync(pgDir, { recursive: true, force: true });
    }
  }
  const mine = results.this as Boots;
  const other = results.other;
  const ms = (boots: Boots, name: string) => median((boots[name] ?? []).map((b) => b.ms));
  const cpu = (boots: Boots, name: string) => median((boots[name] ?? []).map((b) => b.cpu));
  const base = ms(mine, 'postgresql, restart');
  console.log(
    other
      ? `boot to first /info answer (and the server's CPU time by then), median of ${runs}: this checkout, ${against}, and this / that`
      : `boot to first /info answer (and the server's CPU time by then), median of ${runs} (ratio vs PostgreSQL restart)`,
  );
  for (const name of cases) {
    const m = ms(mine, name);
    const c = cpu(mine, name);
    if (other) {
      const o = ms(other, name);
      const oc = cpu(other, name);
      console.log(
        `${name.padEnd(24)} ${m.toFixed(0).padStart(6)} ms ${o.toFixed(0).padStart(6)} ms   x${(m / o).toFixed(2)}` +
          `   CPU ${c.toFixed(0).padStart(6)} ms ${oc.toFixed(0).padStart(6)} ms   x${(c / oc).toFixed(2)}`,
      );
      continue;
    }
    const xs = (mine[name] ?? []).map((b) => b.ms);
    console.log(
      `${name.padEnd(24)} ${m.toFixed(0).padStart(6)} ms   x${(m / base).toFixed(2)}   CPU ${c.toFixed(0)} ms   runs: ${xs.map((x) => x.toFixed(0)).join(', ')}`,
    );
  }
}

await main();
