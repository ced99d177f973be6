import type { Logger } from '@gatehouse/core';
import { expect } from 'chai';
import {
  recordingLosses,
  SessionJournal,
  unfinishedSequence,
  unwrittenRecordings,
} from '../../../plugins/community/gateway/journal';
import {
  type NewRecord,
  type SessionService,
  storableText,
} from '../../../plugins/community/sessions/service';

/** One `addRecords` call the journal made: its entries, and a way to let it finish. */
interface Write {
  records: NewRecord[];
  finish(): void;
}

/**
 * A SessionService that keeps what the journal hands it. `addRecords` calls stay pending until the test finishes
 * them, as a slow store would leave them.
 */
function recorder(opts: { fail?: Error } = {}) {
  const writes: Write[] = [];
  const logged: unknown[] = [];
  const sessions = {
    open: async () => 'uid',
    addEvents: async () => {},
    update: async () => {},
    markClosed: async () => {},
    markRecordingLoss: async () => {},
    addRecords: (_tenant: string, _uid: string, records: NewRecord[]) =>
      new Promise<void>((resolve, reject) =>
        writes.push({ records, finish: () => (opts.fail ? reject(opts.fail) : resolve()) }),
      ),
  };
  const log = {
    error: (...args: unknown[]) => logged.push(args),
    warn: () => {},
    info: () => {},
    debug: () => {},
  } as unknown as Logger;
  const journal = new SessionJournal(
    sessions as unknown as SessionService,
    'tenant',
    { deviceUid: 'device', username: 'root', ip: '127.0.0.1', type: 'term' } as never,
    log,
  );
  return { journal, writes, logged };
}

/** The text the store would keep for some entries, joined. */
const stored = (records: NewRecord[]) =>
  records
    .map((r) => (typeof r.message === 'string' ? r.message : storableText(r.message).toString('utf8')))
    .join('');

/** Ends the journal, letting every write it makes finish, as a store that keeps up would. */
async function ended(journal: SessionJournal, writes: Write[]): Promise<void> {
  let done = false;
  const end = journal.end().then(() => {
    done = true;
  });
  while (!done) {
    for (const w of writes) w.finish();
    await sleep(1);
  }
  await end;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Lets a session's writes finish, each one and the ones its chain starts after it, as a store catching up would. */
async function taken(writes: Write[]): Promise<void> {
  for (let i = 0; i < 10; i++) {
    for (const w of writes) w.finish();
    await sleep(1);
  }
}

describe('community: the session journal keeps recorded output', () => {
  it('keeps a character whose bytes arrive in two entries whole', async () => {
    const { journal, writes } = recorder();
    const text = 'naïve — 日本語 🙂';
    const bytes = Buffer.from(text);
    // Split inside the four-byte emoji, with the halves far enough apart in time to make two entries.
    const cut = bytes.length - 2;
    journal.output(0, bytes.subarray(0, cut), 80, 24);
    await sleep(30);
    journal.output(0, bytes.subarray(cut), 80, 24);
    await ended(journal, writes);
    const records = writes.flatMap((w) => w.records);
    expect(records.length).to.equal(2);
    expect(stored(records)).to.equal(text);
    for (const r of records) expect(isWhole(r.message as Buffer)).to.equal(true);
  });

  it('joins a burst into entries of at most 256 KiB and loses no byte of a long one', async () => {
    const { journal, writes } = recorder();
    const sent: Buffer[] = [];
    for (let i = 0; i < 300; i++) {
      const chunk = Buffer.from(`${String(i).padStart(4, '0')}:${'é'.repeat(1500)}\n`);
      sent.push(chunk);
      journal.output(0, chunk, 80, 24);
    }
    await ended(journal, writes);
    const records = writes.flatMap((w) => w.records);
    expect(stored(records)).to.equal(Buffer.concat(sent).toString('utf8'));
    // About 900 KB in one burst: a few entries, each within the limit.
    expect(records.length).to.be.within(4, 10);
    for (const r of records) expect((r.message as Buffer).length).to.be.at.most(256 * 1024);
  });

  it('does not reuse the memory of entries the store has not taken yet', async () => {
    const { journal, writes } = recorder();
    const first = Buffer.alloc(40_000, 'a');
    journal.output(0, first, 80, 24);
    await sleep(300);
    // The first flush is still being written: the output that follows, flushed behind it, must not land in its
    // memory.
    expect(writes.length).to.equal(1);
    for (let i = 0; i < 40; i++) {
      journal.output(0, Buffer.alloc(30_000, 'b'), 80, 24);
      if (i % 10 === 0) await sleep(260);
    }
    expect(stored((writes[0] as Write).records)).to.equal(first.toString());
    await ended(journal, writes);
    expect(stored(writes.slice(1).flatMap((w) => w.records))).to.equal('b'.repeat(40 * 30_000));
  });

  it('says it is behind once 16 MiB wait for a slow store, and catches up as the store takes them', async () => {
    const { journal, writes } = recorder();
    const chunk = Buffer.alloc(64 * 1024, 'x');
    let sent = 0;
    while (!journal.behind && sent < 64 * 1024 * 1024) {
      journal.output(0, chunk, 80, 24);
      sent += chunk.length;
    }
    expect(journal.behind).to.equal(true);
    expect(sent).to.equal(16 * 1024 * 1024 + chunk.length);
    let caughtUp = false;
    void journal.caughtUp().then(() => {
      caughtUp = true;
    });
    // Written one flush of 4 MiB after another: caught up once at most 8 MiB wait, after the third.
    const taken: number[] = [];
    for (let i = 0; i < 3; i++) {
      await sleep(10);
      expect(caughtUp).to.equal(false);
      const write = writes[i] as Write;
      taken.push(stored(write.records).length);
      write.finish();
    }
    await sleep(10);
    expect(taken).to.deep.equal([4, 4, 4].map((mib) => mib * 1024 * 1024));
    expect(caughtUp).to.equal(true);
    expect(journal.behind).to.equal(false);
    await ended(journal, writes);
    expect(stored(writes.flatMap((w) => w.records)).length).to.equal(sent);
  });

  it('holds every session with output unwritten once 128 MiB wait in all of them, and lets each go on at half the bounds', async () => {
    const before = unwrittenRecordings();
    const mib = 1024 * 1024;
    // Nine sessions of 15 MiB each: none past its own bound of 16 MiB, 135 MiB together.
    const all = Array.from({ length: 9 }, () => recorder());
    const chunk = Buffer.alloc(256 * 1024, 'z');
    const sentEach = 15 * mib;
    for (const [i, { journal }] of all.entries()) {
      for (let sent = 0; sent < sentEach; sent += chunk.length) journal.output(0, chunk, 80, 24);
      // Past the eighth session the total is over 128 MiB.
      expect(journal.behind, `session ${i}`).to.equal(i === 8);
    }
    expect(all.map(({ journal }) => journal.behind)).to.deep.equal(Array(9).fill(true));
    // A session that has printed little is held too while the total is over the bound, and its own writes never
    // finish here: only the others' writes can let it go on.
    const quiet = recorder();
    quiet.journal.output(0, Buffer.alloc(mib / 2, 'q'), 80, 24);
    expect(quiet.journal.behind).to.equal(true);
    expect(unwrittenRecordings() - before).to.equal(135.5 * mib);
    let released = 0;
    for (const { journal } of all) void journal.caughtUp().then(() => released++);
    let quietReleased = false;
    void quiet.journal.caughtUp().then(() => {
      quietReleased = true;
    });
    // A held session goes on once at most 8 MiB of its own and 64 MiB in all wait, or none of its own does. The first
    // session's store takes its 15 MiB: it goes on, the others do not, as 120.5 MiB still wait.
    const first = all[0] as (typeof all)[number];
    await sleep(300);
    await taken(first.writes);
    expect(released).to.equal(1);
    expect(first.journal.behind).to.equal(false);
    // Three more written: 75.5 MiB wait, over half of the bound (64 MiB).
    for (const { writes } of all.slice(1, 4)) await taken(writes);
    expect(released).to.equal(4);
    expect(quietReleased).to.equal(false);
    // One write of 4 MiB each for the other five: 55.5 MiB wait. The quiet session goes on (half a MiB of its own);
    // the five do not, with 11 MiB each, over half of their own bound.
    const rest = all.slice(4);
    for (const { writes } of rest) (writes[0] as Write).finish();
    await sleep(10);
    expect(rest.map(({ writes }) => writes.length)).to.deep.equal(Array(5).fill(2));
    expect(quietReleased).to.equal(true);
    expect(released).to.equal(4);
    // A second each: 7 MiB in each, 35.5 MiB in all.
    for (const { writes } of rest) (writes[1] as Write).finish();
    await sleep(10);
    expect(released).to.equal(9);
    await ended(quiet.journal, quiet.writes);
    for (const { journal, writes } of all) {
      await ended(journal, writes);
      expect(stored(writes.flatMap((w) => w.records)).length).to.equal(sentEach);
    }
    // Everything written: nothing is left counted.
    expect(unwrittenRecordings()).to.equal(before);
  });

  it('stops holding the output when writes fail, so a failing store does not stall the session', async () => {
    const before = unwrittenRecordings();
    const { journal, writes, logged } = recorder({ fail: new Error('connection lost') });
    const chunk = Buffer.alloc(256 * 1024, 'y');
    while (!journal.behind) journal.output(0, chunk, 80, 24);
    let caughtUp = false;
    void journal.caughtUp().then(() => {
      caughtUp = true;
    });
    for (let i = 0; i < 100 && !caughtUp; i++) {
      for (const w of writes) w.finish();
      await sleep(1);
    }
    expect(caughtUp).to.equal(true);
    expect(journal.behind).to.equal(false);
    expect(logged.length).to.be.greaterThan(0);
    // Given up on, each failed write's bytes are counted out once: none left, none taken twice.
    await ended(journal, writes);
    expect(unwrittenRecordings()).to.equal(before);
  });

  /** A store that is down while `down` is set (every write fails at once) and keeps what it takes otherwise. */
  function outage() {
    const state = { down: true, stored: [] as NewRecord[], losses: [] as { bytes: number; at: Date }[] };
    const sessions = {
      open: async () => 'uid',
      addEvents: async () => {},
      update: async () => {},
      markClosed: async () => {},
      markRecordingLoss: async (_t: string, _u: string, bytes: number, at: Date) => {
        if (state.down) throw new Error('connection refused');
        state.losses.push({ bytes, at });
      },
      addRecords: async (_t: string, _u: string, records: NewRecord[]) => {
        if (state.down) throw new Error('connection refused');
        state.stored.push(...records);
      },
    };
    const quiet = { error: () => {}, warn: () => {}, info: () => {}, debug: () => {} } as unknown as Logger;
    const journal = new SessionJournal(
      sessions as unknown as SessionService,
      'tenant',
      { deviceUid: 'device', username: 'root', ip: '127.0.0.1', type: 'term' } as never,
      quiet,
    );
    return { journal, state };
  }

  it('writes again, in order, what the store failed to take once it is back, and loses nothing', async () => {
    const { journal, state } = outage();
    const failedBefore = recordingLosses.failedWrites;
    journal.output(0, Buffer.from('first '), 80, 24);
    await sleep(300);
    journal.output(0, Buffer.from('second '), 80, 24);
    await sleep(300);
    expect(state.stored).to.have.length(0);
    expect(recordingLosses.failedWrites).to.be.greaterThan(failedBefore);
    expect(recordingLosses.retrying()).to.be.greaterThan(0);
    state.down = false;
    journal.output(0, Buffer.from('third'), 80, 24);
    for (let i = 0; i < 100 && stored(state.stored) !== 'first second third'; i++) await sleep(20);
    expect(stored(state.stored)).to.equal('first second third');
    expect(state.losses).to.deep.equal([]);
    await journal.end();
  });

  it('keeps at most 8 MiB of a session for retrying, and counts what it dropped on the session once it can', async () => {
    const { journal, state } = outage();
    const lostBefore = recordingLosses.lostBytes;
    const mib = 1024 * 1024;
    // Three flushes of 4 MiB, each of its own letter, while the store is down.
    for (const letter of ['a', 'b', 'c']) {
      const chunk = Buffer.alloc(256 * 1024, letter);
      for (let i = 0; i < 16; i++) journal.output(0, chunk, 80, 24);
      await sleep(20);
    }
    await sleep(50);
    expect(recordingLosses.lostBytes - lostBefore).to.equal(4 * mib);
    state.down = false;
    for (let i = 0; i < 150 && state.losses.length === 0; i++) await sleep(20);
    // The newest 8 MiB are written, in order; the oldest 4 MiB are counted on the session, not silently gone.
    const text = stored(state.stored);
    expect(text.length).to.equal(8 * mib);
    expect(text[0]).to.equal('b');
    expect(text.at(-1)).to.equal('c');
    expect(state.losses.map((l) => l.bytes)).to.deep.equal([4 * mib]);
    await journal.end();
  });

  it('keeps a size change between the output before and after it', async () => {
    const { journal, writes } = recorder();
    journal.output(0, Buffer.from('before'), 80, 24);
    journal.resize(0, 120, 40);
    journal.output(0, Buffer.from('after'), 120, 40);
    await ended(journal, writes);
    const records = writes.flatMap((w) => w.records);
    expect(records.map((r) => [String(r.message), r.width, r.height])).to.deep.equal([
      ['before', 80, 24],
      ['', 120, 40],
      ['after', 120, 40],
    ]);
  });

  it('keeps a terminal size the columns can hold, however large the one the client claims', async () => {
    const { journal, writes } = recorder();
    // SSH carries sizes as 32-bit unsigned numbers; the columns are signed 32-bit integers.
    journal.resize(0, 0x80000050, 0xffffffff);
    journal.output(0, Buffer.from('text'), 0x80000050, 24);
    await ended(journal, writes);
    const sizes = writes.flatMap((w) => w.records).map((r) => [r.width, r.height]);
    expect(sizes).to.deep.equal([
      [10_000, 10_000],
      [10_000, 24],
    ]);
  });

  it('writes a flood of size changes in batches of at most 512 entries', async () => {
    const { journal, writes } = recorder();
    for (let i = 0; i < 2000; i++) journal.resize(0, 80 + (i % 2), 24);
    await ended(journal, writes);
    const batches = writes.map((w) => w.records.length);
    expect(batches.reduce((a, b) => a + b, 0)).to.equal(2000);
    expect(Math.max(...batches)).to.be.at.most(512);
  });

  it('logs a failed write without the statement or its output', async () => {
    const secret = 'hunter2-in-the-terminal';
    const { journal, writes, logged } = recorder({
      fail: Object.assign(
        new Error(
          `insert into "session_records" ("message") values ('${secret}') - invalid byte sequence for encoding "UTF8"`,
        ),
        { code: '22021', parameters: [secret] },
      ),
    });
    journal.output(0, Buffer.from(secret), 80, 24);
    await ended(journal, writes);
    expect(logged.length).to.equal(1);
    const line = JSON.stringify(logged[0]);
    expect(line).to.include('invalid byte sequence').and.include('22021');
    expect(line).not.to.include(secret);
  });

  it('takes a chunk larger than any slab whole', async () => {
    const { journal, writes } = recorder();
    const big = Buffer.alloc(600_000, 'z');
    journal.output(0, Buffer.from('x'), 80, 24);
    journal.output(0, big, 80, 24);
    await ended(journal, writes);
    expect(stored(writes.flatMap((w) => w.records))).to.equal(`x${big.toString()}`);
  });

  it('keeps a sequence the output never finished as a replacement character', async () => {
    const { journal, writes } = recorder();
    journal.output(0, Buffer.from([0x61, 0xe6, 0x97]), 80, 24);
    await ended(journal, writes);
    expect(stored(writes.flatMap((w) => w.records))).to.equal('a\ufffd');
  });
});

describe('community: recorded output as the store takes it', () => {
  it('passes valid text through as it is', () => {
    const bytes = Buffer.from('ls -la ✓');
    expect(storableText(bytes)).to.equal(bytes);
  });

  it('drops NUL bytes, which PostgreSQL refuses in text, however many there are', () => {
    const bytes = Buffer.concat([Buffer.alloc(100_000), Buffer.from('a\0b'), Buffer.alloc(3)]);
    expect(storableText(bytes).toString()).to.equal('ab');
  });

  it('makes bytes that are not UTF-8 replacement characters', () => {
    expect(storableText(Buffer.from([0x61, 0xff, 0x62, 0xc3])).toString()).to.equal('a\ufffdb\ufffd');
  });

  it('finds an unfinished sequence at the end, and only that', () => {
    const e = Buffer.from('é'); // c3 a9
    const yen = Buffer.from('円'); // three bytes
    const smile = Buffer.from('🙂'); // four bytes
    expect(unfinishedSequence(Buffer.from('abc'))).to.equal(0);
    expect(unfinishedSequence(Buffer.concat([Buffer.from('a'), e]))).to.equal(0);
    expect(unfinishedSequence(e.subarray(0, 1))).to.equal(1);
    expect(unfinishedSequence(yen.subarray(0, 2))).to.equal(2);
    expect(unfinishedSequence(smile.subarray(0, 3))).to.equal(3);
    expect(unfinishedSequence(smile)).to.equal(0);
    // A stray continuation byte or an impossible lead is broken, not unfinished: it stays for the store to replace.
    expect(unfinishedSequence(Buffer.from([0x61, 0x80]))).to.equal(0);
    expect(unfinishedSequence(Buffer.from([0xff]))).to.equal(0);
  });
});

function isWhole(bytes: Buffer): boolean {
  return unfinishedSequence(bytes) === 0 && !bytes.toString('utf8').includes('\ufffd');
}
