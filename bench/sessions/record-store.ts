/**
 * What writing recorded output costs PostgreSQL, with nothing else running: the server's own COPY (copyRecords) of
 * 64 MB per round in 256 KiB entries, 16 entries per statement, as the journal flushes them. It prints the CPU
 * seconds of PostgreSQL's processes and of this process per round, for each kind of output and each way of
 * reaching the store, in interleaved rounds (order alternating), so that the recording benchmark's PostgreSQL CPU
 * (bench/ssh/recording.ts) can be read against a floor.
 *
 *   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
 *     npx tsx bench/sessions/record-store.ts [--rounds 5] [--mb 64] [--kind x|text] [--socket /var/run/postgresql]
 *
 * Kinds of output: `x` (the recording benchmark's `tr "\0" x`, which lz4 shrinks about 250 times) and `text`
 * (lines of a directory listing and of this repository's sources, which lz4 shrinks 2 to 3 times, as terminal
 * output does). `--socket DIR` adds an arm that reaches the same database through PostgreSQL's Unix socket in DIR
 * instead of TCP.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { copyRecords } from '../../plugins/community/sessions/copy-records';
import { startServer } from '../../test/support/server';
import { postgresCpuSeconds } from '../ssh/proc';
import { median } from '../ssh/timing';

const args = process.argv.slice(2);
const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const rounds = Number(option('--rounds') ?? 5) || 5;
const megabytes = Number(option('--mb') ?? 64) || 64;
const socketDir = option('--socket');
const ENTRY = 256 * 1024;
const PER_STATEMENT = 16;

if (!process.env.TEST_DATABASE_URL) {
  console.error('set TEST_DATABASE_URL: the figures are for PostgreSQL');
  process.exit(2);
}

/** Entries of one kind of output, `megabytes` in all, each valid UTF-8 without NUL as the journal stores it. */
function entries(kind: 'x' | 'text'): Buffer[] {
  const total = megabytes * 1_000_000;
  let source: Buffer;
  if (kind === 'x') source = Buffer.alloc(ENTRY, 'x');
  else {
    const listing = execFileSync('ls', ['-lR', '/usr/lib'], { maxBuffer: 256 * 1024 * 1024 });
    const code = readFileSync(
      path.join(import.meta.dirname, '../../plugins/community/gateway/ssh-gateway.ts'),
    );
    source = Buffer.concat([listing, code]);
  }
  const out: Buffer[] = [];
  for (let at = 0, from = 0; at < total; at += ENTRY) {
    if (from + ENTRY > source.length) from = 0;
    // Cut after the entry's last line end, so no entry splits a character (the whole entry when it has none).
    const lineEnd = source.lastIndexOf(10, from + ENTRY - 1) + 1;
    const end = lineEnd > from ? lineEnd : from + ENTRY;
    out.push(source.subarray(from, end));
    from = end;
  }
  return out;
}

const server = await startServer({ ssh: false });
const pools: Knex[] = [];
try {
  const owner = await server.setup();
  const db = server.kernel.container.cradle.db as Knex;
  if (!server.databaseUrl) throw new Error('the test server runs on PGlite');
  const url = new URL(server.databaseUrl);
  const tenantId = owner.tenant;
  const uid = 'bench-record-store';
  await db('sessions').insert({
    uid,
    tenant_id: tenantId,
    device_uid: 'bench',
    username: 'bench',
    ip_address: '127.0.0.1',
    recorded: true,
  });
  const tcp = knexFactory({ client: 'pg', connection: url.toString(), pool: { min: 1, max: 1 } });
  pools.push(tcp);
  const ways: { name: string; db: Knex }[] = [{ name: 'TCP', db: tcp }];
  if (socketDir) {
    const unix = knexFactory({
      client: 'pg',
      connection: {
        host: socketDir,
        user: decodeURIComponent(url.username) || 'postgres',
        database: url.pathname.slice(1),
      },
      pool: { min: 1, max: 1 },
    });
    pools.push(unix);
    ways.push({ name: `Unix socket ${socketDir}`, db: unix });
  }
  const only = option('--kind');
  const kinds = Object.fromEntries(
    (['x', 'text'] as const).filter((k) => only === undefined || only === k).map((k) => [k, entries(k)]),
  );
  const arms = Object.entries(kinds).flatMap(([kind, messages]) =>
    ways.map((way) => ({ name: `${kind}, ${way.name}`, messages, db: way.db })),
  );
  const results = new Map<string, { pg: number; node: number; ms: number }[]>();
  const round = async (arm: (typeof arms)[number]) => {
    const pgBefore = postgresCpuSeconds();
    const nodeBefore = process.cpuUsage();
    const started = performance.now();
    for (let i = 0; i < arm.messages.length; i += PER_STATEMENT) {
      const rows = arm.messages.slice(i, i + PER_STATEMENT).map((message) => ({
        seat: 0,
        time: new Date(),
        width: 80,
        height: 24,
        message,
      }));
      await copyRecords(arm.db, tenantId, uid, rows);
    }
    const ms = performance.now() - started;
    const used = process.cpuUsage(nodeBefore);
    return { ms, pg: postgresCpuSeconds() - pgBefore, node: (used.user + used.system) / 1e6 };
  };
  // One unmeasured round of each first: the connections, the table's first pages, the sources in memory.
  for (const arm of arms) await round(arm);
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? arms : [...arms].reverse();
    for (const arm of order) {
      const got = await round(arm);
      results.set(arm.name, [...(results.get(arm.name) ?? []), got]);
    }
    await db('session_records').where({ session_uid: uid }).delete();
  }
  const size = await db.raw(`select pg_size_pretty(pg_total_relation_size('session_records')) as size`);
  console.log(
    `${megabytes} MB per round in ${ENTRY / 1024} KiB entries, ${PER_STATEMENT} per COPY; medians of ${rounds}`,
  );
  console.log('| output, connection | PostgreSQL CPU s | this process CPU s | wall ms |');
  console.log('|---|---|---|---|');
  for (const [name, rs] of results) {
    console.log(
      `| ${name} | ${median(rs.map((r) => r.pg)).toFixed(3)} (${rs.map((r) => r.pg.toFixed(2)).join(', ')}) | ` +
        `${median(rs.map((r) => r.node)).toFixed(3)} | ${median(rs.map((r) => r.ms)).toFixed(0)} |`,
    );
  }
  console.log(`session_records after the last delete: ${size.rows[0].size}`);
} finally {
  for (const pool of pools) await pool.destroy();
  await server.stop();
}
