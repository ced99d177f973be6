/**
 * Boot time to the first `GET /info` answer, as a user starts the server (`node bin/gatehouse.js serve`), on the
 * embedded store (first run, which initialises PGlite, and a restart) and on PostgreSQL (fresh database, restart).
 * Usage: node --import tsx bench/boot/boot.ts [runs]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { dropDatabase, freshDatabase } from '../../test/support/server';

const runs = Number(process.argv[2] ?? 3);
const bin = path.resolve('bin/gatehouse.js');

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

async function bootOnce(env: NodeJS.ProcessEnv): Promise<number> {
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
        if (res.ok) return performance.now() - started;
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
  const results: Record<string, number[]> = {
    'embedded, first run': [],
    'embedded, restart': [],
    'postgresql, first run': [],
    'postgresql, restart': [],
  };
  for (let i = 0; i < runs; i++) {
    const dir = mkdtempSync(path.join(tmpdir(), 'gh-boot-'));
    results['embedded, first run']?.push(await bootOnce({ GATEHOUSE_DATA_DIR: dir }));
    results['embedded, restart']?.push(await bootOnce({ GATEHOUSE_DATA_DIR: dir }));
    rmSync(dir, { recursive: true, force: true });
    process.env.TEST_DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/postgres';
    const url = await freshDatabase();
    const pgDir = mkdtempSync(path.join(tmpdir(), 'gh-boot-'));
    results['postgresql, first run']?.push(
      await bootOnce({ GATEHOUSE_DATA_DIR: pgDir, GATEHOUSE_DATABASE_URL: url }),
    );
    results['postgresql, restart']?.push(
      await bootOnce({ GATEHOUSE_DATA_DIR: pgDir, GATEHOUSE_DATABASE_URL: url }),
    );
    await dropDatabase(url);
    rmSync(pgDir, { recursive: true, force: true });
  }
  const base = median(results['postgresql, restart'] ?? []);
  console.log(`boot to first /info answer, median of ${runs} (ratio vs PostgreSQL restart)`);
  for (const [name, xs] of Object.entries(results)) {
    const m = median(xs);
    console.log(
      `${name.padEnd(24)} ${m.toFixed(0).padStart(6)} ms   x${(m / base).toFixed(2)}   runs: ${xs.map((x) => x.toFixed(0)).join(', ')}`,
    );
  }
}

await main();
