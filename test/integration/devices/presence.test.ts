import { expect } from 'chai';
import type { Knex } from 'knex';
import { loadConfig } from '../../../core/config/load';
import { openDatabase } from '../../../core/store/db';
import { migrateLatest } from '../../../core/store/migrate';
import { DevicePresence } from '../../../plugins/community/devices/presence';
import { communityEditionMigrations } from '../../support/migrations';
import { dropDatabase, freshDatabase } from '../../support/server';

/**
 * The devices side of the tunnel hub (issue 16): tunnels that come up together are written connected in one
 * statement, a tunnel that closes right after it came up ends offline, and the writes of several rows (arrivals,
 * ping rounds) never deadlock against each other. On PostgreSQL when TEST_DATABASE_URL is set, else the embedded
 * store.
 */
describe('devices: presence writes of the tunnel hub', () => {
  let db: Knex;
  let url: string | undefined;
  let presence: DevicePresence;
  const tenant = '00000000-0000-4000-8000-00000000d001';
  const uids = Array.from({ length: 40 }, (_, i) => `${i + 1}`.padStart(64, 'd'));

  before(async () => {
    url = await freshDatabase();
    db = openDatabase(loadConfig({}, { database: { url, poolMax: 6 } }), { memory: !url });
    await migrateLatest(db, communityEditionMigrations);
    const owner = 'd'.repeat(24);
    await db('users').insert({
      id: owner,
      name: 'Dee',
      username: 'dee',
      email: 'dee@example.com',
      password_hash: 'x',
    });
    await db('namespaces').insert({ tenant_id: tenant, name: 'dee', owner });
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
    await db?.destroy();
    await dropDatabase(url);
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

  it('gathers the tunnels that come up while a write runs into the next one', async () => {
    await presence.offline(uids);
    const statements = await onlineStatements(async () => {
      const first = presence.online(uids[0] as string, '198.51.100.1');
      // Arrivals spread over the turns the first write takes: they wait for it, then go together.
      const rest: Promise<void>[] = [];
      for (const uid of uids.slice(1)) {
        rest.push(presence.online(uid, '198.51.100.2'));
        await new Promise((r) => setImmediate(r));
      }
      await Promise.all([first, ...rest]);
    });
    expect(statements).to.be.at.least(2).and.below(uids.length);
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

  it('runs arrivals, ping rounds and a shutdown of all rows at the same time without a deadlock', async () => {
    const reversed = [...uids].reverse();
    const runs: Promise<unknown>[] = [];
    for (let round = 0; round < 10; round++) {
      runs.push(presence.alive(round % 2 ? uids : reversed));
      for (const uid of round % 2 ? reversed : uids) runs.push(presence.online(uid, '192.0.2.200'));
      runs.push(presence.offline(round % 2 ? reversed : uids));
    }
    const settled = await Promise.allSettled(runs);
    expect(settled.filter((s) => s.status === 'rejected')).to.deep.equal([]);
  });
});
