import { expect } from 'chai';
import type { Knex } from 'knex';
import { DevicePresence } from '../../../plugins/community/devices/presence';
import { type MigratedStore, migratedStore } from '../../support/store';

/**
 * The devices side of the tunnel hub: tunnels that come up together are written connected in one
 * statement, a tunnel that closes right after it came up ends offline, and the writes of several rows (arrivals,
 * ping rounds) never deadlock against each other. On PostgreSQL when TEST_DATABASE_URL is set, else the embedded
 * store.
 */
describe('devices: presence writes of the tunnel hub', () => {
  let store: MigratedStore | undefined;
  let db: Knex;
  let url: string | undefined;
  let presence: DevicePresence;
  const tenant = '00000000-0000-4000-8000-00000000d001';
  const uids = Array.from({ length: 40 }, (_, i) => `${i + 1}`.padStart(64, 'd'));

  before(async () => {
    store = await migratedStore({ owner: 'd'.repeat(24), username: 'dee', tenant, poolMax: 6 });
    ({ db, url } = store);
    await db('devices').insert(
      uids.map((uid, i) => ({
        uid,
        tenant_id: tenant,
        name: `dev-${i}`,
        identity: JSON.stringify({ mac: '02:00:00:00:00:01' }),
        info: JSON.stringify({
          id: 'debian',
          pretty_name: 'Debian',
          version: '1',
          arch: 'amd64',
          platform: 'native',
        }),
        public_key: 'key',
        status: 'accepted',
        last_seen: db.raw(`now() - interval '1 hour'`),
      })),
    );
    presence = new DevicePresence({ db });
  });
  after(async () => {
    await store?.close();
  });

  async function rows(): Promise<Map<string, { connected: boolean; remote_addr: string; fresh: boolean }>> {
    const all = (await db('devices')
      .whereIn('uid', uids)
      .select(
        'uid',
        'connected',
        'remote_addr',
        db.raw(`last_seen > now() - interval '1 minute' as fresh`),
      )) as {
      uid: string;
      connected: boolean;
      remote_addr: string;
      fresh: boolean;
    }[];
    return new Map(all.map((r) => [r.uid, r]));
  }

  /** The statements that set devices connected, while `fn` runs. */
  async function onlineStatements(fn: () => Promise<unknown>): Promise<number> {
    let n = 0;
    const count = (q: { sql: string }) => {
      if (/connected\s*=\s*true/i.test(q.sql)) n += 1;
    };
    db.on('query', count);
    try {
      await fn();
    } finally {
      db.off('query', count);
    }
    return n;
  }

  it('writes the tunnels that come up in one turn with one statement, each with its own address', async () => {
    const statements = await onlineStatements(() =>
      Promise.all(uids.map((uid, i) => presence.online(uid, `192.0.2.${i + 1}`))),
    );
    expect(statements).to.equal(1);
    const after = await rows();
    for (const [i, uid] of uids.entries()) {
      const row = after.get(uid);
      expect(row?.connected, uid).to.equal(true);
      expect(row?.remote_addr, uid).to.equal(`192.0.2.${i + 1}`);
      expect(row?.fresh, uid).to.equal(true);
    }
  });

  /** Runs `fn` while another connection holds the row of `uid` locked, until `fn` has started waiting for it. */
  async function withRowHeld(uid: string, fn: () => Promise<unknown>): Promise<void> {
    const trx = await db.transaction();
    await trx('devices').where({ uid }).forUpdate().first('uid');
    const running = fn();
    // Long enough for the write to reach the held row and wait there.
    await new Promise((r) => setTimeout(r, 300));
    await trx.commit();
    await running;
  }

  it('gathers the tunnels that come up while a write waits into the next statement (PostgreSQL only: holds a row on a second connection)', async function () {
    // Holding a row needs a second connection; the embedded store has one, where nothing runs beside a write.
    if (!url) this.skip();
    await presence.offline(uids);
    const [first, ...rest] = uids as [string, ...string[]];
    const statements = await onlineStatements(() =>
      withRowHeld(first, async () => {
        const waiting = presence.online(first, '198.51.100.1');
        // The first batch is written (and waits on the held row) before the others come up, over several turns.
        await new Promise((r) => setTimeout(r, 50));
        const others: Promise<void>[] = [];
        for (const uid of rest) {
          others.push(presence.online(uid, '198.51.100.2'));
          await new Promise((r) => setImmediate(r));
        }
        await Promise.all([waiting, ...others]);
      }),
    );
    expect(statements).to.equal(2);
    expect([...(await rows()).values()].every((r) => r.connected)).to.equal(true);
  });

  it('leaves a tunnel that closed right after it came up offline, and its neighbours online', async () => {
    await presence.offline(uids);
    const [closing, staying] = uids as [string, string];
    // The hub's order for one device: its offline runs once its online has settled.
    const closed = presence.online(closing, '203.0.113.1').then(() => presence.offline([closing]));
    await Promise.all([closed, presence.online(staying, '203.0.113.2')]);
    const after = await rows();
    expect(after.get(closing)?.connected).to.equal(false);
    expect(after.get(staying)?.connected).to.equal(true);
  });

  it('lets two servers write the same devices in opposite orders without a deadlock (PostgreSQL only: two connections)', async function () {
    // Two writes at once need two connections; the embedded store has one, where no two statements can interleave.
    if (!url) this.skip();
    await db('devices')
      .whereIn('uid', uids)
      .update({ connected: false, last_seen: db.raw(`now() - interval '1 hour'`) });
    const one = new DevicePresence({ db });
    const other = new DevicePresence({ db });
    const reversed = [...uids].reverse();
    // Both batches reach the held middle row having locked what comes before it in their own order, unless they
    // lock in uid order: then the second waits at the first row, and neither holds what the other needs.
    const statements = await onlineStatements(() =>
      withRowHeld(uids[20] as string, () =>
        Promise.all([
          ...uids.map((uid) => one.online(uid, '192.0.2.201')),
          ...reversed.map((uid) => other.online(uid, '192.0.2.202')),
        ]),
      ),
    );
    // A deadlock would abort one batch, which is then written again row by row: 40 more statements.
    expect(statements).to.equal(2);
    const after = await rows();
    expect([...after.values()].every((r) => r.connected && r.fresh)).to.equal(true);

    // Ping rounds and shutdowns of both, in opposite orders, at the same time as more arrivals.
    await db('devices')
      .whereIn('uid', uids)
      .update({ last_seen: db.raw(`now() - interval '1 hour'`) });
    const settled = await Promise.allSettled([
      one.alive(uids),
      other.alive(reversed),
      ...uids.map((uid) => one.online(uid, '192.0.2.203')),
      one.offline(uids),
      other.offline(reversed),
    ]);
    expect(settled.filter((s) => s.status === 'rejected')).to.deep.equal([]);
  });
});
