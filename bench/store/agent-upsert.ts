/**
 * The availability call's statement against the Device model written the way the rest of the store is (plain knex
 * was once kept for the agent's upsert without a benchmark against a model version; this is that benchmark).
 *
 *   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
 *     node --import tsx bench/store/agent-upsert.ts [--rounds 5] [--calls 2000] [--devices 10000] [--parallel 50]
 *     [--without-last-seen-index] [--without-name-indexes]
 *
 * Three ways to refresh a known device and read its namespace's name, each on the same database in interleaved
 * rounds (order alternating), called one after another (latency) and `--parallel` at a time (throughput):
 *  - `knex`:  DeviceService.refresh, the one statement the server runs (an UPDATE ... RETURNING joined with the
 *             namespace, synchronous commit off for that statement);
 *  - `model`: the Device model's patch with returning (through the tenant-bound query, as services use it), then the namespace through the model: two statements, each
 *             its own transaction, so each waits for its WAL flush;
 *  - `model, async commit`: the same two in a transaction that turns synchronous commit off first, the durability the
 *             server chose: begin, set, update, select, commit.
 * It measures the store alone: no HTTP, no proof of possession, no token (the same for all three). The kernel runs in
 * this process only to open and migrate the store.
 */
import { TenantStore } from '@gatehouse/core';
import { raw } from 'objection';
import { Device } from '../../plugins/community/devices/model';
import type { DeviceAuthValues, DeviceService } from '../../plugins/community/devices/service';
import { Namespace } from '../../plugins/community/namespaces/model';
import { startServer } from '../../test/support/server';

const args = process.argv.slice(2);
function option(name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  return i < 0 ? fallback : Number(args[i + 1]);
}
const rounds = option('rounds', 5);
const calls = option('calls', 2000);
const deviceCount = option('devices', 10_000);
const parallel = option('parallel', 50);
/**
 * `--without-last-seen-index`: put back the schema from before the device list's index, which had
 * last_seen in no index, to see what that index costs this call: with it every refresh writes to every index of the
 * table (no heap-only update).
 */
const lastSeenIndex = !args.includes('--without-last-seen-index');
/**
 * `--without-name-indexes`: drop the list's name indexes (the trigram one of the `contains` filter, the b-tree of the
 * name order), to see what their entries cost each refresh.
 */
const nameIndex = !args.includes('--without-name-indexes');

if (!process.env.TEST_DATABASE_URL) {
  console.error('set TEST_DATABASE_URL: the figures are for PostgreSQL');
  process.exit(2);
}

type Refresh = (
  values: DeviceAuthValues,
) => Promise<{ uid: string; name: string; namespace: string } | undefined>;

const server = await startServer({ ssh: false });
try {
  const owner = await server.setup();
  const tenant = owner.tenant;
  const { db, devices } = server.kernel.container.cradle as unknown as {
    db: import('knex').Knex;
    devices: DeviceService;
  };
  await db.raw(
    `insert into devices (uid, tenant_id, name, identity, info, public_key, hostname, status)
     select 'f' || lpad(to_hex(i), 63, '0'), ?, 'dev-' || i, jsonb_build_object('mac', '02:00:00:00:00:00'),
            '{}'::jsonb, 'seeded', 'dev-' || i, 'accepted'
     from generate_series(1, ?::int) as i`,
    [tenant, deviceCount],
  );
  if (!nameIndex) {
    await db.raw('drop index if exists devices_name_trgm_idx');
    await db.raw('drop index if exists devices_name_idx');
  }
  if (!lastSeenIndex) {
    await db.raw('drop index devices_recent_idx');
    await db.raw('create index devices_list_idx on devices (tenant_id, kind, status)');
  }
  await db.raw('analyze devices');
  const uidOf = (i: number) => `f${(i + 1).toString(16).padStart(63, '0')}`;
  const info = JSON.stringify({
    id: 'debian',
    pretty_name: 'Debian GNU/Linux 12',
    version: '0.2.0',
    arch: 'amd64',
    platform: 'native',
  });
  const valuesFor = (i: number): DeviceAuthValues => ({
    tenant,
    uid: uidOf(i),
    name: `dev-${i + 1}`,
    identity: JSON.stringify({ mac: '02:00:00:00:00:00' }),
    info,
    publicKey: 'seeded',
    hostname: `dev-${i + 1}`,
    remoteAddr: '192.0.2.7',
  });

  const patchFor = (v: DeviceAuthValues) =>
    ({
      info: JSON.parse(v.info),
      hostname: v.hostname,
      remote_addr: v.remoteAddr,
      last_seen: raw('now()'),
      status: raw(`case when status = 'removed' then 'pending' else status end`),
      status_update_at: raw(`case when status = 'removed' then now() else status_update_at end`),
    }) as unknown as Partial<Device>;

  const ways: Record<string, Refresh> = {
    knex: (v) => devices.refresh(v),
    model: async (v) => {
      const [row] = (await new TenantStore(db, v.tenant)
        .query(Device)
        .patch(patchFor(v))
        .where({ uid: v.uid })
        .returning(['uid', 'name', 'tenant_id'])) as unknown as Device[];
      if (!row) return undefined;
      const ns = await Namespace.bindKnex(db).query().findById(row.tenant_id).select('name');
      return { uid: row.uid, name: row.name, namespace: ns?.name ?? '' };
    },
    'model, async commit': (v) =>
      db.transaction(async (trx) => {
        await trx.raw('set local synchronous_commit = off');
        const [row] = (await new TenantStore(db, v.tenant, trx)
          .query(Device)
          .patch(patchFor(v))
          .where({ uid: v.uid })
          .returning(['uid', 'name', 'tenant_id'])) as unknown as Device[];
        if (!row) return undefined;
        const ns = await Namespace.query(trx).findById(row.tenant_id).select('name');
        return { uid: row.uid, name: row.name, namespace: ns?.name ?? '' };
      }),
  };

  // Each way answers the same for a known device and for one the namespace does not have.
  for (const [name, refresh] of Object.entries(ways)) {
    const known = await refresh(valuesFor(7));
    if (known?.uid !== uidOf(7) || known.name !== 'dev-8' || !known.namespace)
      throw new Error(`${name} answered ${JSON.stringify(known)}`);
    if ((await refresh({ ...valuesFor(7), uid: 'e'.repeat(64) })) !== undefined)
      throw new Error(`${name} found a device that does not exist`);
  }

  const latency: Record<string, number[]> = Object.fromEntries(Object.keys(ways).map((n) => [n, []]));
  const throughput: Record<string, number[]> = Object.fromEntries(Object.keys(ways).map((n) => [n, []]));
  let next = 0;
  const pick = () => valuesFor(next++ % deviceCount);
  for (let round = 0; round < rounds; round++) {
    const order = Object.keys(ways);
    if (round % 2) order.reverse();
    for (const name of order) {
      const refresh = ways[name] as Refresh;
      const times: number[] = [];
      for (let i = 0; i < calls; i++) {
        const t = performance.now();
        await refresh(pick());
        times.push(performance.now() - t);
      }
      latency[name]?.push(...times);
      const t = performance.now();
      let left = calls;
      await Promise.all(
        Array.from({ length: parallel }, async () => {
          while (left-- > 0) await refresh(pick());
        }),
      );
      throughput[name]?.push(calls / ((performance.now() - t) / 1000));
    }
  }

  const pct = (sorted: number[], p: number) =>
    sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
  const median = (xs: number[]) =>
    pct(
      [...xs].sort((a, b) => a - b),
      50,
    );
  const base = { p50: 0, p99: 0, rate: 0 };
  const hot = await db.raw<{ rows: { n_tup_upd: number; n_tup_hot_upd: number }[] }>(
    `select n_tup_upd, n_tup_hot_upd from pg_stat_user_tables where relname = 'devices'`,
  );
  const stats = hot.rows[0];
  console.log(
    `${lastSeenIndex ? 'with' : 'without'} an index holding last_seen, ${nameIndex ? 'with' : 'without'} the name indexes; heap-only updates ${stats?.n_tup_hot_upd} of ${
      stats?.n_tup_upd
    } (statistics may lag by a few hundred)`,
  );
  console.log(
    `${deviceCount} devices, ${rounds} rounds of ${calls} calls one at a time and ${calls} calls ${parallel} at a time; ` +
      `pool of ${server.kernel.config.database.poolMax}`,
  );
  console.log(
    '| way | p50 ms | p99 ms | calls/s at %d parallel (median of rounds) | p50 / knex | calls/s / knex |',
    parallel,
  );
  console.log('|---|---|---|---|---|---|');
  for (const name of Object.keys(ways)) {
    const sorted = [...(latency[name] ?? [])].sort((a, b) => a - b);
    const p50 = pct(sorted, 50);
    const p99 = pct(sorted, 99);
    const rate = median(throughput[name] ?? []);
    if (name === 'knex') Object.assign(base, { p50, p99, rate });
    console.log(
      `| ${name} | ${p50.toFixed(2)} | ${p99.toFixed(2)} | ${rate.toFixed(0)} | ${(p50 / base.p50).toFixed(2)}x | ${(
        rate / base.rate
      ).toFixed(2)}x |`,
    );
  }
} finally {
  await server.stop();
}
