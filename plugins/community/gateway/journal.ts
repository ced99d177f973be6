import type { Logger } from '@gatehouse/core';
import type { SessionEvent } from '../sessions/schemas';
import { type NewRecord, type NewSession, newSessionUid, type SessionService } from '../sessions/service';

/** How often buffered terminal output goes to the store, and the most kept in memory before a flush is forced. */
const FLUSH_MS = 250;
const FLUSH_ENTRIES = 512;
/**
 * Recorded output not yet in the store: a flush is started once this much has gathered, and the session's output
 * is held (`behind`) while more than the most waits, until half of it is written. Without a bound a store slower
 * than the output (a lock, a slow disk, a failover) made every recorded session keep all its output in memory
 * until the process ran out of it; with it a session waits for the store, as its recording must be complete.
 */
const FLUSH_BYTES = 4 * 1024 * 1024;
const MOST_UNWRITTEN = 16 * 1024 * 1024;
/**
 * The same bound for all the sessions of the process together: past it every recorded session with output still
 * unwritten is held, until the total is down to half or its own output is written. Without it each session kept its
 * own 16 MiB and more, so a hundred recorded sessions printing into a stalled store held two gigabytes.
 */
const MOST_UNWRITTEN_EVERYWHERE = 128 * 1024 * 1024;
let unwrittenEverywhere = 0;
/** Journals with a caller waiting for `caughtUp()`: released when the total falls, whichever session's write did it. */
const waitingForRoom = new Set<SessionJournal>();

/** Recorded output that all the sessions of this process have taken and the store has not yet (bytes). */
export function unwrittenRecordings(): number {
  return unwrittenEverywhere;
}

/**
 * Output the store failed to take is kept and written again, oldest first, with a growing pause between tries: a
 * store that is down for a while (a restart, a failover, a full disk) loses no recording. What is kept for retrying
 * is bounded, per session and for the process: past it the oldest is dropped, and what is dropped is counted, on the
 * session (`recording_lost_bytes`, once the store takes it), in the metrics and in the log. A session that ended
 * goes on retrying for a while; what is left then is counted as lost the same way.
 */
const MOST_RETRYING = 8 * 1024 * 1024;
const MOST_RETRYING_EVERYWHERE = 64 * 1024 * 1024;
const RETRY_FIRST_MS = 500;
const RETRY_MOST_MS = 30_000;
const RETRY_AFTER_END_MS = 10 * 60_000;
let retryingEverywhere = 0;

/** What recording lost or is retrying, in this process since it started (the metrics read these). */
export const recordingLosses = {
  /** Writes of recorded output the store refused or failed. */
  failedWrites: 0,
  /** Bytes of recorded output given up on. */
  lostBytes: 0,
  /** Bytes kept now for writing again. */
  retrying: () => retryingEverywhere,
};
/** Output within this many milliseconds of the previous entry joins it, up to this many bytes. */
const COALESCE_MS = 20;
const COALESCE_BYTES = 256 * 1024;
/**
 * The largest terminal size kept with an entry. SSH carries sizes as 32-bit unsigned numbers and the columns are
 * integers: a size past 2^31 would make every write of the session's recording fail.
 */
const MAX_TERMINAL_SIZE = 10_000;

function terminalSize(n: number): number {
  return Number.isInteger(n) && n > 0 ? Math.min(n, MAX_TERMINAL_SIZE) : 0;
}

/**
 * Recorded output is copied as it passes into slabs that are reused once the store has the entries cut from them:
 * no string per chunk, no joined strings, no re-encoding for the wire, and none of the buffers the output arrived
 * in held past the moment it passed. At tens of megabytes a second that was most of what recording cost the
 * gateway, in copies and in the major collections that buffers kept for a while bring (bench/RESULTS.md).
 *
 * A journal's first slab after each flush is a small one, so a quiet or interactive session holds 16 KiB between
 * flushes; output that overflows it goes on in large slabs. An entry never spans two slabs.
 */
const SMALL_SLAB = 16 * 1024;
const LARGE_SLAB = COALESCE_BYTES;
/** Slabs waiting for reuse, by size, and how many of each are kept at most (4 MiB small, 8 MiB large). */
const spareSlabs = new Map<number, { spare: Buffer[]; keep: number }>([
  [SMALL_SLAB, { spare: [], keep: 256 }],
  [LARGE_SLAB, { spare: [], keep: 32 }],
]);

function takeSlab(size: number): Buffer {
  return spareSlabs.get(size)?.spare.pop() ?? Buffer.allocUnsafeSlow(size);
}

function giveBack(slabs: Buffer[]): void {
  for (const slab of slabs) {
    const pool = spareSlabs.get(slab.length);
    if (pool && pool.spare.length < pool.keep) pool.spare.push(slab);
  }
}

/** An entry still taking output: bytes `start` to `start + bytes` of `slab`. */
interface OpenEntry {
  seat: number;
  time: number;
  width: number;
  height: number;
  slab: Buffer;
  start: number;
  bytes: number;
}

/** Sees a recorded seat's output and size changes as they pass, before the store has them (a live watch). */
export type JournalTap = (seat: number, chunk: Buffer | undefined, width: number, height: number) => void;

/**
 * What one gateway session writes to the store: its row, its events and, with recording on, the terminal output of
 * each seat. The data path does not wait for each write: entries are stamped when they pass and written in order
 * on one promise chain, batched every quarter second or 4 MiB, and `end()` flushes what is left so the tail of a
 * dropped connection is kept. Only a store more than 16 MiB behind with this session, or 128 MiB with all of them, holds
 * the session (`behind`, `caughtUp`).
 *
 * The session row itself is written with the first entry, not at admission: a connection that tries no password
 * or key (or whose refusal is not kept) leaves no row, so connecting and leaving in a loop fills no table.
 */
export class SessionJournal {
  private chain: Promise<void> = Promise.resolve();
  private opened = false;
  readonly uid = newSessionUid();
  private events: Omit<SessionEvent, 'timestamp'>[] = [];
  private records: NewRecord[] = [];
  private open: OpenEntry | undefined;
  /** The slab output is copied into, how much of it is used, and the slabs the unwritten entries are cut from. */
  private slab: Buffer | undefined;
  private used = 0;
  private held: Buffer[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** Per seat, the start of a UTF-8 sequence that the last entry ended in: it opens the seat's next entry. */
  private readonly carried = new Map<number, Buffer>();
  /** Per seat, the terminal size of its last entry (for bytes carried to the end). */
  private readonly sizes = new Map<number, { width: number; height: number }>();
  private ended = false;
  /** Recorded bytes taken and not yet written (or given up on), and whoever waits for them to fall. */
  private unwritten = 0;
  /** The bytes gathered since the last flush (part of `unwritten`). */
  private gathered = 0;
  private caughtUpWaiters: Array<() => void> = [];
  /** Per seat, the recording entries taken so far (written or on their way to the store). */
  private readonly entries = new Map<number, number>();
  /** Sees the output as it passes while someone watches the session (gateway/watch.ts). */
  tap: JournalTap | undefined;
  /** Entries the store failed to take, oldest first, with their bytes: written again before any newer ones. */
  private readonly retrying: { records: NewRecord[]; bytes: number }[] = [];
  private retryingBytes = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryDelay = RETRY_FIRST_MS;
  /** Output given up on and not yet counted on the session, and when the first of it was. */
  private lost = 0;
  private lostAt: Date | undefined;
  /** The session's row could not be written: it is written again before anything else. */
  private rowMissing = false;
  private endedAt: number | undefined;

  constructor(
    private readonly sessions: SessionService,
    private readonly tenantId: string,
    private readonly session: Omit<NewSession, 'uid' | 'tenantId'>,
    private readonly log: Logger,
  ) {}

  /**
   * Whether more recorded output waits for the store than a session may keep in memory: whoever feeds `output`
   * pauses its source until `caughtUp()` resolves.
   */
  get behind(): boolean {
    return (
      this.unwritten > MOST_UNWRITTEN ||
      (this.unwritten > 0 && unwrittenEverywhere > MOST_UNWRITTEN_EVERYWHERE)
    );
  }

  /**
   * Resolves once at most half of the most unwritten output waits for the store, in this session and in the process
   * (or none of this session's does): at once when that is so already.
   */
  caughtUp(): Promise<void> {
    if (this.hasRoom()) return Promise.resolve();
    waitingForRoom.add(this);
    return new Promise((resolve) => this.caughtUpWaiters.push(resolve));
  }

  private hasRoom(): boolean {
    return (
      this.unwritten <= MOST_UNWRITTEN / 2 &&
      (this.unwritten === 0 || unwrittenEverywhere <= MOST_UNWRITTEN_EVERYWHERE / 2)
    );
  }

  private release(): void {
    if (!this.hasRoom()) return;
    waitingForRoom.delete(this);
    for (const resolve of this.caughtUpWaiters.splice(0)) resolve();
  }

  private taken(bytes: number): void {
    this.unwritten += bytes;
    unwrittenEverywhere += bytes;
  }

  private written(bytes: number): void {
    this.unwritten -= bytes;
    unwrittenEverywhere -= bytes;
    if (this.caughtUpWaiters.length) this.release();
    if (unwrittenEverywhere <= MOST_UNWRITTEN_EVERYWHERE / 2)
      for (const journal of waitingForRoom) journal.release();
  }

  /** Whether the session has a row (something was written for it). */
  get stored(): boolean {
    return this.opened;
  }

  event(type: string, seat: number, data?: unknown): void {
    if (this.ended) return;
    this.events.push({ type, seat, ...(data === undefined ? {} : { data }) });
    // A client can send thousands of requests (window changes) in a quarter second: a flush is forced, as for output.
    if (this.events.length >= FLUSH_ENTRIES) this.flush();
    else this.schedule();
  }

  /**
   * Terminal output of a seat. A UTF-8 sequence split between entries is carried whole into the next one, so text
   * stays intact; bytes that are not text are made text where the store takes them (sessions/service.ts).
   */
  output(seat: number, chunk: Buffer, columns: number, rows: number): void {
    if (this.ended || chunk.length === 0) return;
    this.taken(chunk.length);
    this.gathered += chunk.length;
    const width = terminalSize(columns);
    const height = terminalSize(rows);
    this.tap?.(seat, chunk, width, height);
    const now = Date.now();
    // Output arriving in a burst becomes one entry: far fewer rows to write, and players cannot show a
    // difference of a few milliseconds anyway.
    const open = this.open;
    if (
      open &&
      open.seat === seat &&
      open.width === width &&
      open.height === height &&
      now - open.time < COALESCE_MS &&
      open.slab === this.slab &&
      this.used + chunk.length <= open.slab.length
    ) {
      chunk.copy(open.slab, this.used);
      this.used += chunk.length;
      open.bytes += chunk.length;
      if (this.gathered >= FLUSH_BYTES) this.flush();
      return;
    }
    this.seal();
    const carried = this.carried.get(seat);
    this.carried.delete(seat);
    const bytes = chunk.length + (carried?.length ?? 0);
    let slab = this.slab;
    if (bytes > LARGE_SLAB) {
      // Larger than any slab (no transport here hands over such chunks, but nothing stops one): a copy of its own.
      slab = Buffer.allocUnsafe(bytes);
      this.open = { seat, time: now, width, height, slab, start: 0, bytes };
    } else {
      if (!slab || slab.length - this.used < bytes) {
        slab = takeSlab(slab ? LARGE_SLAB : SMALL_SLAB);
        if (bytes > slab.length) {
          giveBack([slab]);
          slab = takeSlab(LARGE_SLAB);
        }
        this.slab = slab;
        this.used = 0;
        this.held.push(slab);
      }
      this.open = { seat, time: now, width, height, slab, start: this.used, bytes };
      this.used += bytes;
    }
    const at = this.open.start;
    if (carried) carried.copy(slab, at);
    chunk.copy(slab, at + (carried?.length ?? 0));
    if (this.records.length >= FLUSH_ENTRIES || this.gathered >= FLUSH_BYTES) this.flush();
    else this.schedule();
  }

  /**
   * Completes the open entry, less an unfinished UTF-8 sequence at its end, which the seat's next entry starts
   * with.
   */
  private seal(): void {
    const open = this.open;
    if (!open) return;
    this.open = undefined;
    this.sizes.set(open.seat, { width: open.width, height: open.height });
    const entry = open.slab.subarray(open.start, open.start + open.bytes);
    const tail = unfinishedSequence(entry);
    if (tail) this.carried.set(open.seat, Buffer.from(entry.subarray(entry.length - tail)));
    if (tail === entry.length) return;
    this.take({
      seat: open.seat,
      message: tail ? entry.subarray(0, entry.length - tail) : entry,
      time: new Date(open.time),
      width: open.width,
      height: open.height,
    });
  }

  private take(record: NewRecord): void {
    this.records.push(record);
    this.entries.set(record.seat, (this.entries.get(record.seat) ?? 0) + 1);
  }

  /**
   * Sends what has gathered to the store now and answers, per seat, how many entries the recording has once the
   * store has them all: a watcher reads that many from the store and follows the tap from there, so it sees each
   * byte once. A UTF-8 sequence still unfinished at this instant is in neither, and shows as a replacement character.
   */
  syncPoint(): Record<number, number> {
    if (!this.ended) this.flush();
    return Object.fromEntries(this.entries);
  }

  /** A terminal size change of a recorded seat (an entry without text, so players resize at that instant). */
  resize(seat: number, columns: number, rows: number): void {
    if (this.ended) return;
    this.seal();
    const width = terminalSize(columns);
    const height = terminalSize(rows);
    this.sizes.set(seat, { width, height });
    this.take({ seat, message: '', time: new Date(), width, height });
    this.tap?.(seat, undefined, width, height);
    if (this.records.length >= FLUSH_ENTRIES) this.flush();
    else this.schedule();
  }

  update(changes: { authenticated?: boolean; term?: string; recorded?: boolean }): void {
    this.enqueue(() => this.sessions.update(this.tenantId, this.uid, changes));
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => this.flush(), FLUSH_MS);
    this.timer.unref();
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.seal();
    const events = this.events.splice(0);
    const records = this.records.splice(0);
    // The entries are cut from these slabs: they go back for reuse once the store has them (after a failed write
    // they are left to the collector, whatever the store did with them), and output from now on goes to fresh ones.
    const slabs = this.held;
    this.held = [];
    this.slab = undefined;
    this.used = 0;
    // Written or given up on (a failed write is logged): either way the bytes no longer wait in this session.
    const bytes = this.gathered;
    this.gathered = 0;
    if (events.length) this.enqueue(() => this.sessions.addEvents(this.tenantId, this.uid, events));
    if (records.length)
      // Written or failed (even at once, before a promise), the bytes are released; only a write the store took gives
      // its slabs back. While older entries wait to be written again, these wait behind them, so the recording
      // keeps its order.
      this.enqueue(async () => {
        try {
          if (this.retrying.length > 0 || this.rowMissing) {
            this.keepForRetry(records, bytes);
            return;
          }
          try {
            await this.sessions.addRecords(this.tenantId, this.uid, records);
            giveBack(slabs);
          } catch (err) {
            this.failed(err);
            this.keepForRetry(records, bytes);
          }
        } finally {
          this.written(bytes);
        }
      });
    else {
      giveBack(slabs);
      this.written(bytes);
    }
  }

  private openRow(): Promise<void> {
    return this.sessions
      .open({ ...this.session, tenantId: this.tenantId, uid: this.uid })
      .then(() => undefined);
  }

  private enqueue(write: () => Promise<void>): void {
    if (!this.opened) {
      this.opened = true;
      this.chain = this.chain
        .then(() => this.openRow())
        .catch((err: unknown) => {
          this.failed(err);
          // Without its row nothing of the session can be written: the recording waits for it, as for a retry.
          this.rowMissing = true;
          this.scheduleRetry();
        });
    }
    this.chain = this.chain.then(write).catch((err: unknown) => this.failed(err));
  }

  /** Keeps entries the store did not take, copied out of the slabs, within the bounds; drops the oldest past them. */
  private keepForRetry(records: NewRecord[], bytes: number): void {
    const kept = records.map((r) =>
      typeof r.message === 'string' ? r : { ...r, message: Buffer.from(r.message) },
    );
    this.retrying.push({ records: kept, bytes });
    this.retryingBytes += bytes;
    retryingEverywhere += bytes;
    while (
      this.retrying.length > 1 &&
      (this.retryingBytes > MOST_RETRYING || retryingEverywhere > MOST_RETRYING_EVERYWHERE)
    )
      this.giveUp(this.retrying.shift() as { bytes: number });
    this.scheduleRetry();
  }

  private giveUp(batch: { bytes: number }): void {
    this.retryingBytes -= batch.bytes;
    retryingEverywhere -= batch.bytes;
    this.lost += batch.bytes;
    this.lostAt ??= new Date();
    recordingLosses.lostBytes += batch.bytes;
    this.log.error(
      { session: this.uid, bytes: batch.bytes },
      'recorded output given up on: the store did not take it',
    );
  }

  private scheduleRetry(): void {
    if (this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.chain = this.chain.then(() => this.retry());
    }, this.retryDelay);
    this.retryTimer.unref();
  }

  /** Writes again what waits, oldest first; then counts on the session what was given up on. */
  private async retry(): Promise<void> {
    try {
      if (this.rowMissing) {
        await this.openRow();
        this.rowMissing = false;
      }
      while (this.retrying.length > 0) {
        const batch = this.retrying[0] as { records: NewRecord[]; bytes: number };
        await this.sessions.addRecords(this.tenantId, this.uid, batch.records);
        this.retrying.shift();
        this.retryingBytes -= batch.bytes;
        retryingEverywhere -= batch.bytes;
      }
      if (this.lost > 0) {
        const [bytes, at] = [this.lost, this.lostAt ?? new Date()];
        await this.sessions.markRecordingLoss(this.tenantId, this.uid, bytes, at);
        this.lost -= bytes;
        if (this.lost === 0) this.lostAt = undefined;
      }
      this.retryDelay = RETRY_FIRST_MS;
    } catch (err) {
      this.failed(err);
      if (this.endedAt !== undefined && Date.now() - this.endedAt > RETRY_AFTER_END_MS) {
        // Given up on: logged, counted; the session keeps no trace only if its row can never be written.
        for (const batch of this.retrying.splice(0)) this.giveUp(batch);
        this.log.error(
          { session: this.uid, lost: this.lost },
          'stopped retrying a recording the store did not take',
        );
        return;
      }
      this.retryDelay = Math.min(this.retryDelay * 2, RETRY_MOST_MS);
      this.scheduleRetry();
    }
  }

  /**
   * Logs a failed write by what the store said, not the error itself: knex puts the statement in its message and
   * the embedded store its parameters in the error, and those are recorded terminal output, not for the log.
   */
  private failed(err: unknown): void {
    recordingLosses.failedWrites++;
    const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
    const text = typeof message === 'string' ? message : String(err);
    // knex: "<statement> - <what PostgreSQL said>".
    const cut = text.lastIndexOf(' - ');
    const reason = (cut === -1 ? text : text.slice(cut + 3)).slice(0, 300);
    this.log.error({ session: this.uid, code, reason }, 'session journal write failed');
  }

  /** Flushes everything and marks the session closed; resolves when the store has it. */
  end(): Promise<void> {
    if (this.ended) return this.chain;
    this.seal();
    // A sequence the output never finished: kept as it was (the store shows it as a replacement character).
    for (const [seat, rest] of this.carried) {
      const { width, height } = this.sizes.get(seat) ?? { width: 0, height: 0 };
      this.take({ seat, message: rest, time: new Date(), width, height });
    }
    this.carried.clear();
    this.flush();
    this.ended = true;
    this.endedAt = Date.now();
    // Nothing was ever written: no row to close.
    if (this.opened) this.enqueue(() => this.sessions.markClosed(this.tenantId, this.uid));
    return this.chain;
  }
}

/**
 * How many bytes at the end of `bytes` start a UTF-8 sequence that needs more bytes than follow it (0 to 3). Looks
 * back to the last byte that can start a sequence; a sequence that is broken rather than unfinished is left in place.
 */
export function unfinishedSequence(bytes: Uint8Array): number {
  const last = Math.min(3, bytes.length);
  for (let back = 1; back <= last; back++) {
    const byte = bytes[bytes.length - back] as number;
    if ((byte & 0xc0) === 0x80) continue;
    const needs = byte >= 0xf8 ? 1 : byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return needs > back ? back : 0;
  }
  return 0;
}
