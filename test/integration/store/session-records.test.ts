import { TenantStore } from '@gatehouse/core';
import { loadConfig } from '@gatehouse/server';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { openDatabase } from '../../../core/store/db';
import { NamespaceSessions, SessionService } from '../../../plugins/community/sessions/service';
import { type MigratedStore, migratedStore } from '../../support/store';

/**
 * Recorded terminal output as the gateway hands it to the store: the bytes the device sent, not strings.
 * On PostgreSQL they go in one binary COPY (copy-records.ts); on the embedded store as INSERTs of about 2 MB in a
 * transaction. Either way what reads back is the text a terminal would show, and a flush is kept whole and in
 * order, or not at all.
 */
describe('store: recorded output written as bytes', () => {
  let store: MigratedStore;
  let db: Knex;
  let url: string | undefined;
  const tenant = '00000000-0000-4000-8000-00000000d001';
  let sessions: SessionService;
  let reader: NamespaceSessions;

  before(async () => {
    store = await migratedStore({ owner: 'd'.repeat(24), username: 'dee', tenant });
    ({ db, url } = store);
    sessions = new SessionService({ db });
    reader = new NamespaceSessions({
      tenant: new TenantStore(db, tenant),
      liveSessions: { close: async () => {} },
    });
  });
  after(async () => {
    await store?.close();
  });

  const session = () =>
    sessions.open({
      tenantId: tenant,
      deviceUid: 'f'.repeat(64),
      username: 'root',
      ip: '127.0.0.1',
      type: 'term',
      recorded: true,
    });
  const entry = (seat: number, message: string | Buffer) => ({
    seat,
    message,
    time: new Date(),
    width: 80,
    height: 24,
  });

  it('reads back what was written, with NUL dropped and bytes that are not text replaced', async () => {
    const uid = await session();
    await sessions.addRecords(tenant, uid, [
      entry(0, Buffer.from('plain ✓ text\r\n')),
      entry(0, Buffer.from([0x61, 0x00, 0x62, 0x00])),
      entry(0, Buffer.from([0x63, 0xff, 0xfe, 0x64])),
      entry(0, 'a string, as a device reports it\u0000'),
    ]);
    const read = await reader.records(uid, 0);
    expect(read.map((r) => r.message)).to.deep.equal([
      'plain ✓ text\r\n',
      'ab',
      'c\ufffd\ufffdd',
      'a string, as a device reports it',
    ]);
  });

  it('keeps a large flush whole and in order', async () => {
    const uid = await session();
    // 24 entries of 256 KiB: three statements' worth, each entry telling its place.
    const entries = Array.from({ length: 24 }, (_, i) => {
      const body = Buffer.alloc(256 * 1024, 'x');
      body.write(String(i).padStart(4, '0'));
      return entry(i % 2, body);
    });
    await sessions.addRecords(tenant, uid, entries);
    for (const seat of [0, 1]) {
      const read = await reader.records(uid, seat);
      expect(read.map((r) => r.message.slice(0, 4))).to.deep.equal(
        entries.flatMap((e, i) => (e.seat === seat ? [String(i).padStart(4, '0')] : [])),
      );
      for (const r of read) expect(r.message.length).to.equal(256 * 1024);
    }
  });

  it('keeps a flush of more rows than one INSERT can name parameters for', async () => {
    const uid = await session();
    // 10,000 rows of 7 parameters would be 70,000, past PostgreSQL's 65,535 for one statement.
    const entries = Array.from({ length: 10_000 }, (_, i) => entry(0, Buffer.from(`${i},`)));
    await sessions.addRecords(tenant, uid, entries);
    const read = await reader.records(uid, 0);
    expect(read.length).to.equal(10_000);
    expect(read.at(-1)?.message).to.equal('9999,');
  });

  it('refuses records of a session that does not exist, and the next write goes through', async () => {
    const missing = 'e'.repeat(64);
    const refused = await sessions.addRecords(tenant, missing, [entry(0, Buffer.from('lost'))]).then(
      () => undefined,
      (err: Error) => err,
    );
    expect(refused?.message).to.match(/foreign key/);
    expect(await db('session_records').where({ session_uid: missing })).to.deep.equal([]);
    // The connection the refused write used is usable again.
    const uid = await session();
    await sessions.addRecords(tenant, uid, [entry(0, Buffer.from('kept'))]);
    expect((await reader.records(uid, 0)).map((r) => r.message)).to.deep.equal(['kept']);
  });

  it('keeps the instant, the size, the seat and the namespace of each entry', async () => {
    const uid = await session();
    const time = new Date('2026-11-27T12:34:56.789Z');
    await sessions.addRecords(tenant, uid, [
      { seat: 3, message: Buffer.from('x'), time, width: 132, height: 43 },
    ]);
    const [row] = await db('session_records').where({ session_uid: uid });
    expect(row).to.include({ tenant_id: tenant, seat: 3, width: 132, height: 43, message: 'x' });
    expect(new Date(row.time).toISOString()).to.equal(time.toISOString());
  });

  it('sends none of a timed-out write afterwards, so reused memory cannot reach a recording (pending without TEST_DATABASE_URL)', async function () {
    // The embedded store writes with INSERTs in its own thread: no COPY, no socket, no query timeout to race.
    if (!url) this.skip();
    this.timeout(30_000);
    // A second store whose statements time out after a second, and a transaction that holds the table meanwhile.
    const hasty = openDatabase(loadConfig({}, { database: { url, queryTimeout: 1, poolMax: 1 } }));
    const locker = await db.transaction();
    try {
      const uid = await session();
      await locker.raw('lock table session_records in access exclusive mode');
      const slab = Buffer.alloc(64 * 1024, 'a');
      const timedOut = await new SessionService({ db: hasty })
        .addRecords(tenant, uid, [entry(0, slab.subarray(0, 1000))])
        .then(
          () => undefined,
          (err: Error) => err,
        );
      expect(timedOut?.message).to.match(/timeout/i);
      // The journal would now let another session's output into the slab.
      slab.fill('B');
      await locker.commit();
      await new Promise((r) => setTimeout(r, 500));
      expect(await db('session_records').where({ session_uid: uid })).to.deep.equal([]);
      // And the hasty store still writes. A write that went through ends pg's timer for it: the connection is the
      // same one after the timeout has passed.
      const backend = async () => (await hasty.raw('select pg_backend_pid() as pid')).rows[0].pid as number;
      const before = await backend();
      await new SessionService({ db: hasty }).addRecords(tenant, uid, [entry(0, Buffer.from('later'))]);
      expect((await reader.records(uid, 0)).map((r) => r.message)).to.deep.equal(['later']);
      await new Promise((r) => setTimeout(r, 1300));
      expect(await backend()).to.equal(before);
    } finally {
      if (!locker.isCompleted()) await locker.rollback();
      await hasty.destroy();
    }
  });

  it('writes nothing of a flush that fails part of the way', async () => {
    const uid = await session();
    const big = Buffer.alloc(1024 * 1024, 'x');
    // The last entry names a seat the column refuses (seats are integers): the statements before it roll back.
    const entries = [entry(0, big), entry(0, big), entry(0, big), { ...entry(0, big), seat: 2 ** 40 }];
    let failed = false;
    await sessions.addRecords(tenant, uid, entries).catch(() => {
      failed = true;
    });
    expect(failed).to.equal(true);
    expect(await reader.records(uid, 0)).to.deep.equal([]);
  });
});
