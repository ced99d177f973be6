import { TenantStore } from '@gatehouse/core';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { NamespaceSessions, SessionService } from '../../../plugins/community/sessions/service';
import { type MigratedStore, migratedStore } from '../../support/store';

/**
 * Recording retention: a namespace that keeps recordings N days loses those of sessions started earlier, and each
 * such session says when and why; open sessions, younger ones, sessions of namespaces that keep everything and
 * other namespaces' sessions keep theirs.
 */
describe('store: recordings removed by their namespace retention, with a trace', () => {
  let store: MigratedStore;
  let db: Knex;
  const keeping = '00000000-0000-4000-8000-00000000e001';
  const forever = '00000000-0000-4000-8000-00000000e002';
  let sessions: SessionService;
  const reader = (tenant: string) =>
    new NamespaceSessions({ tenant: new TenantStore(db, tenant), liveSessions: { close: async () => {} } });

  before(async () => {
    store = await migratedStore({ owner: 'e'.repeat(24), username: 'eve', tenant: keeping });
    ({ db } = store);
    await db('namespaces').insert({ tenant_id: forever, name: 'forever', owner: 'e'.repeat(24) });
    sessions = new SessionService({ db });
  });
  after(async () => store?.close());

  const retention = (tenant: string, days: number | string | undefined) =>
    db('namespaces')
      .where({ tenant_id: tenant })
      .update({
        settings: db.raw(
          days === undefined
            ? "settings - 'recording_retention_days'"
            : "jsonb_set(settings, '{recording_retention_days}', ?::jsonb)",
          days === undefined ? [] : [JSON.stringify(days)],
        ),
      });
  /** A recorded session started `daysAgo` days ago with one line of output; closed unless told. */
  const recorded = async (tenant: string, daysAgo: number, closed = true) => {
    const uid = await sessions.open({
      tenantId: tenant,
      deviceUid: 'f'.repeat(64),
      username: 'root',
      ip: '127.0.0.1',
      type: 'term',
      recorded: true,
    });
    await sessions.addRecords(tenant, uid, [
      { seat: 0, message: Buffer.from(`output of ${uid}\r\n`), time: new Date(), width: 80, height: 24 },
    ]);
    const started = new Date(Date.now() - daysAgo * 86_400_000);
    await db('sessions')
      .where({ uid })
      .update({ started_at: started, ...(closed ? { closed_at: started } : {}) });
    return uid;
  };
  const recordsOf = async (uid: string) =>
    Number((await db('session_records').where({ session_uid: uid }).count({ n: '*' }))[0]?.n);

  it('removes the recordings older than the namespace keeps them and marks each session', async () => {
    await retention(keeping, 30);
    const old = await recorded(keeping, 31);
    const older = await recorded(keeping, 400);
    const young = await recorded(keeping, 29);
    const open = await recorded(keeping, 31, false);
    const elsewhere = await recorded(forever, 400);

    expect(await sessions.expireRecordings()).to.equal(2);
    for (const uid of [old, older]) {
      expect(await recordsOf(uid), uid).to.equal(0);
      const shown = await reader(keeping).get(uid);
      expect(shown.recorded).to.equal(true);
      expect(shown.recording_removed_reason).to.equal('retention');
      expect(Date.now() - Date.parse(shown.recording_removed_at ?? '')).to.be.within(0, 60_000);
    }
    for (const [uid, tenant] of [
      [young, keeping],
      [open, keeping],
      [elsewhere, forever],
    ] as const) {
      expect(await recordsOf(uid), uid).to.equal(1);
      expect((await reader(tenant).get(uid)).recording_removed_at).to.equal(null);
    }
    // A second run finds nothing more.
    expect(await sessions.expireRecordings()).to.equal(0);
  });

  it('removes in batches until none is left, and keeps everything where retention is 0, unset or not a number', async () => {
    await retention(keeping, 1);
    const many = [];
    for (let i = 0; i < 205; i++) many.push(await recorded(keeping, 2));
    for (const days of [0, undefined, 'ten', -5]) {
      await retention(forever, days);
      await recorded(forever, 5000);
    }
    const removed = await sessions.expireRecordings();
    // The young session of the first test is past one day too; the open one is still open.
    expect(removed).to.equal(205 + 1);
    for (const uid of many) expect(await recordsOf(uid)).to.equal(0);
    const kept = await db('session_records').where({ tenant_id: forever }).count({ n: '*' });
    expect(Number(kept[0]?.n)).to.equal(5);
  });
});
