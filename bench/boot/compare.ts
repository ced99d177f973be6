/**
 * Boot of several Gatehouse trees in one run (before and after a change), alternating so that the machine's load
 * falls on each alike: `gatehouse serve` on PostgreSQL, restarted (the store already migrated), to its first
 * `GET /info` answer. Besides the wall time it reads the server process's CPU time (user + system, /proc), which a
 * busy shared machine disturbs far less.
 * Usage: node --import tsx bench/boot/compare.ts <rounds> <name>=<tree> [<name>=<tree> ...]
 * A tree is a checkout with node_modules (e.g. `git archive <commit> | tar -x` plus `cp -al node_modules`).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { dropDatabase, freshDatabase } from '../../test/support/server';

const rounds = Number(process.argv[2] ?? 5);
const trees = process.argv.slice(3).map((arg) => {
  const [name = '', dir = ''] = arg.split('=');
  return { name, dir: path.resolve(dir) };
});
if (trees.length === 0) throw new Error('usage: compare.ts <rounds> <name>=<tree> ...');
/** Clock ticks per second of /proc's times (USER_HZ, 100 on Linux). */
const USER_HZ = 100;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

async function boot(dir: string, env: NodeJS.ProcessEnv): Promise<{ wall: number; cpu: number }> {
  const http = await freePort();
  const ssh = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [path.join(dir, 'bin/gatehouse.js'), 'serve'], {
    cwd: dir,
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
        if ((await fetch(`http://127.0.0.1:${http}/info`)).ok) break;
      } catch {
        // not listening yet
      }
      if (performance.now() - started > 120_000) throw new Error(`${dir}: no /info answer within 120 s`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const wall = performance.now() - started;
    const fields = (readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1] ?? '').split(' ');
    const cpu = ((Number(fields[11]) + Number(fields[12])) * 1000) / USER_HZ;
    return { wall, cpu };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

async function main() {
  process.env.TEST_DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/postgres';
  const stores = [];
  for (const t of trees) {
    const store = {
      url: await freshDatabase(),
      dataDir: mkdtempSync(path.join(tmpdir(), 'gh-boot-compare-')),
    };
    // The first start migrates the store; the measured ones are restarts.
    await boot(t.dir, { GATEHOUSE_DATA_DIR: store.dataDir, GATEHOUSE_DATABASE_URL: store.url });
    stores.push(store);
  }
  const results = trees.map(() => [] as { wall: number; cpu: number }[]);
  try {
    for (let round = 0; round < rounds; round++) {
      for (const [i, t] of trees.entries()) {
        const store = stores[i] as (typeof stores)[number];
        results[i]?.push(
          await boot(t.dir, { GATEHOUSE_DATA_DIR: store.dataDir, GATEHOUSE_DATABASE_URL: store.url }),
        );
      }
    }
  } finally {
    for (const s of stores) {
      await dropDatabase(s.url);
      rmSync(s.dataDir, { recursive: true, force: true });
    }
  }
  console.log(`PostgreSQL restart to first /info, median of ${rounds} (CPU = user + system of the server)`);
  for (const [i, t] of trees.entries()) {
    const xs = results[i] ?? [];
    console.log(
      `${t.name.padEnd(10)} CPU ${median(xs.map((x) => x.cpu)).toFixed(0)} ms (${xs.map((x) => x.cpu.toFixed(0)).join(', ')})   wall ${median(xs.map((x) => x.wall)).toFixed(0)} ms (${xs.map((x) => x.wall.toFixed(0)).join(', ')})`,
    );
  }
}

await main();
