import { loadConfig } from '@gatehouse/server';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { openDatabase } from '../../../core/store/db';
import { migrateLatest } from '../../../core/store/migrate';
import * as deviceCounts from '../../../plugins/community/migrations/20261204000000_device_counts';
import * as deviceTagCounts from '../../../plugins/community/migrations/20261206000000_device_tag_counts';
import { communityEditionMigrations } from '../../support/migrations';
import { dropDatabase, freshDatabase } from '../../support/server';

const statuses = ['accepted', 'pending', 'rejected', 'removed', 'unused'] as const;

/**
 * The kept device counts: triggers keep `device_counts` and `device_tag_counts` equal to a count of
 * `devices` through every kind of change, including changes made at the same time on several connections, and the
 * migrations fill them from the rows already there.
 */
describe('store: kept device counts', () => {
  let db: Knex;
  let url: string | undefined;
  const owner = 'c'.repeat(24);
  const tenants = ['00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-00000000c002'];
  let next = 0;

  before(async () => {
    url = await freshDatabase();
    db = openDatabase(loadConfig({}, { database: { url, poolMax: 6 } }), { memory: !url });
    await migrateLatest(db, communityEditionMigrations);
    await db('users').insert({
      id: owner,
      name: 'Cee',
      username: 'cee',
      email: 'cee@example.com',
      password_hash: 'x',
    });
    for (const [i, tenant_id] of tenants.entries())
      await db('namespaces').insert({ tenant_id, name: `cee${i}`, owner });
  });
  after(async () => {
    await db?.destroy();
    await dropDatabase(url);
  });

  const device = (tenant_id: string, extra: Record<string, unknown> = {}) => {
    next += 1;
    return {
      uid: `${next}`.padStart(64, '0'),
      tenant_id,
      name: `dev-${next}`,
      identity: JSON.stringify({ mac: `02:00:00:00:${String(next % 100).padStart(2, '0')}:00` }),
      info: JSON.stringify({
        id: 'debian',
        pretty_name: 'Debian',
        version: '1',
        arch: 'amd64',
        platform: 'native',
      }),
      public_key: 'key',
      // Some with no tag, some with two, one naming a tag twice (it counts once).
      tags: [[], ['lab'], ['lab', 'edge'], ['edge', 'edge']][next % 4],
      ...extra,
    };
  };

  /** The kept counts and a real count of the rows, in the same shape, for every tenant and kind. */
  async function bothCounts(): Promise<{ kept: string[]; counted: string[] }> {
    const kept = (await db('device_counts').select('*')) as Record<string, string | number>[];
    const counted = (await db('devices')
      .select('tenant_id', 'kind', 'status')
      .count({ n: '*' })
      .groupBy('tenant_id', 'kind', 'status')) as {
      tenant_id: string;
      kind: string;
      status: string;
      n: string;
    }[];
    const keptLines = kept.flatMap((r) =>
      statuses.filter((s) => Number(r[s]) !== 0).map((s) => `${r.tenant_id} ${r.kind} ${s} ${Number(r[s])}`),
    );
    const countedLines = counted.map((r) => `${r.tenant_id} ${r.kind} ${r.status} ${Number(r.n)}`);
    const keptTags = (await db('device_tag_counts').where('n', '<>', 0)) as Record<string, string | number>[];
    const countedTags = (
      await db.raw(`
        select d.tenant_id, d.kind, d.status, t.tag, count(*) as n
        from devices d cross join lateral (select distinct unnest(d.tags) as tag) t
        group by 1, 2, 3, 4`)
    ).rows as Record<string, string | number>[];
    const tagLine = (r: Record<string, string | number>) =>
      `${r['tenant_id']} ${r['kind']} ${r['status']} tag:${r['tag']} ${Number(r['n'])}`;
    return {
      kept: [...keptLines, ...keptTags.map(tagLine)].sort(),
      counted: [...countedLines, ...countedTags.map(tagLine)].sort(),
    };
  }

  async function expectExact(): Promise<void> {
    const { kept, counted } = await bothCounts();
    expect(kept).to.deep.equal(counted);
  }

  it('follows inserts, status changes, updates that keep the status, and deletes', async () => {
    const [a, b] = tenants as [string, string];
    await db('devices').insert([device(a), device(a), device(a, { status: 'accepted' }), device(b)]);
    await db('devices').insert(device(a, { kind: 'container', status: 'accepted' }));
    await expectExact();
    const kept = await db('device_counts').where({ tenant_id: a, kind: 'device' }).first();
    expect(kept).to.include({ accepted: 1, pending: 2, rejected: 0, removed: 0, unused: 0 });

    const pendingUid = (await db('devices').where({ tenant_id: a, status: 'pending' }).first('uid')).uid;
    await db('devices').where({ uid: pendingUid }).update({ status: 'accepted' });
    await db('devices').where({ tenant_id: b }).update({ status: 'rejected' });
    await expectExact();

    // The availability call's shape: it names status in its SET list without changing it.
    await db('devices')
      .where({ tenant_id: a })
      .update({
        last_seen: db.fn.now(),
        status: db.raw(`case when status = 'removed' then 'pending' else status end`),
      });
    await expectExact();
    await db('devices').where({ uid: pendingUid }).update({ status: 'removed' });
    await db('devices')
      .where({ uid: pendingUid })
      .update({ status: db.raw(`'pending'`) });
    await db('devices').where({ tenant_id: b }).delete();
    await expectExact();
    // Nothing was left behind for the tenant whose devices were all deleted.
    const emptied = await db('device_counts').where({ tenant_id: b }).first();
    expect(statuses.map((s) => emptied[s])).to.deep.equal([0, 0, 0, 0, 0]);
  });

  it('counts a bulk insert once per namespace, not once per device', async () => {
    const tenant = tenants[0] as string;
    const before = Number((await db.raw(`select pg_relation_size('device_counts') as n`)).rows[0].n);
    await db('devices').insert(Array.from({ length: 2000 }, () => device(tenant)));
    await expectExact();
    // One new version of the namespace's row, not 2,000 (which would take some 16 pages).
    const after = Number((await db.raw(`select pg_relation_size('device_counts') as n`)).rows[0].n);
    expect(after - before).to.be.at.most(8192);
    await db('devices').where({ tenant_id: tenant }).delete();
    await expectExact();
  });

  it('leaves no count when a change is rolled back', async () => {
    const before = await bothCounts();
    const failed = await db
      .transaction(async (trx) => {
        await trx('devices').insert(device(tenants[0] as string));
        await trx('devices').where({ tenant_id: tenants[0] }).update({ status: 'unused' });
        throw new Error('roll back');
      })
      .catch((e: Error) => e.message);
    expect(failed).to.equal('roll back');
    expect(await bothCounts()).to.deep.equal(before);
  });

  it('stays exact under status changes made at the same time on several connections', async () => {
    const tenant = tenants[0] as string;
    const rows = Array.from({ length: 40 }, () => device(tenant));
    await db('devices').insert(rows);
    const cycle = ['accepted', 'rejected', 'pending', 'unused', 'removed'];
    // Each device goes through every status, devices in parallel: the per-namespace row takes every change.
    await Promise.all(
      rows.map(async (r, i) => {
        for (let step = 0; step < cycle.length; step++) {
          await db('devices')
            .where({ uid: r.uid })
            .update({ status: cycle[(i + step) % cycle.length] });
        }
      }),
    );
    await Promise.all(rows.slice(0, 20).map((r) => db('devices').where({ uid: r.uid }).delete()));
    await expectExact();
  });

  it('follows tag edits, bulk renames and tag changes made at the same time, without deadlocks', async () => {
    const tenant = tenants[0] as string;
    const rows = Array.from({ length: 40 }, () => device(tenant, { status: 'accepted' }));
    await db('devices').insert(rows);
    await expectExact();
    const sets = [['lab'], ['edge', 'lab'], [], ['prod'], ['lab', 'prod', 'edge']];
    // Single devices retagged in parallel, while whole-namespace renames run on other connections: each takes the
    // namespace's count row first, so none of them deadlocks on tag rows taken in opposite orders.
    await Promise.all([
      ...rows.map(async (r, i) => {
        for (let step = 0; step < sets.length; step++) {
          await db('devices')
            .where({ uid: r.uid })
            .update({ tags: sets[(i + step) % sets.length], ...(step === 2 ? { status: 'pending' } : {}) });
        }
      }),
      ...(
        [
          ['lab', 'site'],
          ['edge', 'rim'],
          ['site', 'lab'],
        ] as const
      ).map(([from, to]) =>
        db('devices')
          .where({ tenant_id: tenant })
          .whereRaw('tags @> ?::text[]', [[from]])
          .update({ tags: db.raw('array_replace(tags, ?, ?)', [from, to]) }),
      ),
    ]);
    await expectExact();
    // A tag-only change of one device moves only its own tags.
    const one = rows[0]!;
    await db('devices')
      .where({ uid: one.uid })
      .update({ tags: ['solo'] });
    const solo = await db('device_tag_counts').where({ tenant_id: tenant, tag: 'solo' });
    expect(solo.map((r) => [r.status, r.n])).to.deep.equal([[(await statusOf(one.uid)) as string, 1]]);
    await expectExact();
  });

  it('locks no namespace row: accepting a device beside a retag that makes a new tag row does not deadlock (pending without TEST_DATABASE_URL: the embedded store has one connection)', async function () {
    // Two transactions at once need two connections: the embedded store has one, and would wait for itself.
    if (!url) this.skip();
    const tenant = tenants[0] as string;
    const pending = device(tenant, { tags: ['lab'] });
    const tagged = device(tenant, { status: 'accepted', tags: ['lab'] });
    await db('devices').insert([pending, tagged]);
    // Accepting a device holds its namespace FOR UPDATE while it changes the device (plugins/community/devices);
    // a tag row that referenced the namespace would take a share lock on it from inside the counts' lock.
    await db.transaction(async (accepting) => {
      await accepting('namespaces').where({ tenant_id: tenant }).forUpdate();
      // Started now (a knex builder runs when `then` is called), on another connection.
      const retag = db('devices')
        .where({ uid: tagged.uid })
        .update({ tags: db.raw(`array_append(tags, 'brand-new-tag')`) })
        .then((n) => n);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await accepting('devices').where({ uid: pending.uid }).update({ status: 'accepted' });
      await retag;
    });
    await expectExact();
  });

  async function statusOf(uid: string): Promise<string> {
    return (await db('devices').where({ uid }).first('status')).status;
  }

  it('is filled from the rows already there when the migration runs, and goes with its namespace', async () => {
    await deviceTagCounts.down(db);
    await deviceCounts.down(db);
    expect(await db.schema.hasTable('device_counts')).to.equal(false);
    expect(await db.schema.hasTable('device_tag_counts')).to.equal(false);
    await db('devices').insert([
      device(tenants[1] as string, { status: 'accepted' }),
      device(tenants[1] as string),
    ]);
    await deviceCounts.up(db);
    await deviceTagCounts.up(db);
    await expectExact();
    const filled = await db('device_counts').where({ tenant_id: tenants[1], kind: 'device' }).first();
    expect(filled).to.include({ accepted: 1, pending: 1 });
    await db('namespaces').where({ tenant_id: tenants[1] }).delete();
    expect(await db('device_counts').where({ tenant_id: tenants[1] })).to.deep.equal([]);
    expect(await db('device_tag_counts').where({ tenant_id: tenants[1] })).to.deep.equal([]);
    await expectExact();
  });
});
