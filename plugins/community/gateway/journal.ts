import { StringDecoder } from 'node:string_decoder';
import type { Logger } from '@gatehouse/core';
import {
  type NewRecord,
  type NewSession,
  newSessionUid,
  type SessionEvent,
  type SessionService,
} from '../sessions/service';

/** How often buffered terminal output goes to the store, and the most kept in memory before a flush is forced. */
const FLUSH_MS = 250;
const FLUSH_ENTRIES = 512;
/** Output within this many milliseconds of the previous entry joins it, up to this many characters. */
const COALESCE_MS = 20;
const COALESCE_CHARS = 256 * 1024;

/**
 * What one gateway session writes to the store: its row, its events and, with recording on, the terminal output of
 * each seat. The data path never waits for the store: entries are stamped when they pass and written in order on
 * one promise chain, batched every quarter second, and `end()` flushes what is left so the tail of a dropped
 * connection is kept.
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
  private timer: NodeJS.Timeout | undefined;
  private readonly decoders = new Map<number, StringDecoder>();
  private ended = false;

  constructor(
    private readonly sessions: SessionService,
    private readonly tenantId: string,
    private readonly session: Omit<NewSession, 'uid' | 'tenantId'>,
    private readonly log: Logger,
  ) {}

  /** Whether the session has a row (something was written for it). */
  get stored(): boolean {
    return this.opened;
  }

  event(type: string, seat: number, data?: unknown): void {
    if (this.ended) return;
    this.events.push({ type, seat, ...(data === undefined ? {} : { data }) });
    this.schedule();
  }

  /** Terminal output of a seat; split UTF-8 sequences are carried to the next chunk so text stays intact. */
  output(seat: number, chunk: Buffer, width: number, height: number): void {
    if (this.ended) return;
    let decoder = this.decoders.get(seat);
    if (!decoder) {
      decoder = new StringDecoder('utf8');
      this.decoders.set(seat, decoder);
    }
    const message = decoder.write(chunk);
    if (!message) return;
    const now = new Date();
    // Output arriving in a burst becomes one entry: far fewer rows to write, and players cannot show a
    // difference of a few milliseconds anyway.
    const last = this.records.at(-1);
    if (
      last &&
      last.seat === seat &&
      last.width === width &&
      last.height === height &&
      now.getTime() - last.time.getTime() < COALESCE_MS &&
      last.message.length < COALESCE_CHARS
    ) {
      last.message += message;
      return;
    }
    this.records.push({ seat, message, time: now, width, height });
    if (this.records.length >= FLUSH_ENTRIES) this.flush();
    else this.schedule();
  }

  /** A terminal size change of a recorded seat (an entry without text, so players resize at that instant). */
  resize(seat: number, width: number, height: number): void {
    if (this.ended) return;
    this.records.push({ seat, message: '', time: new Date(), width, height });
    this.schedule();
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
    const events = this.events.splice(0);
    const records = this.records.splice(0);
    if (events.length) this.enqueue(() => this.sessions.addEvents(this.tenantId, this.uid, events));
    if (records.length) this.enqueue(() => this.sessions.addRecords(this.tenantId, this.uid, records));
  }

  private enqueue(write: () => Promise<void>): void {
    if (!this.opened) {
      this.opened = true;
      const open = () =>
        this.sessions.open({ ...this.session, tenantId: this.tenantId, uid: this.uid }).then(() => undefined);
      this.chain = this.chain.then(open).catch((err: unknown) => {
        this.log.error({ err, session: this.uid }, 'session journal write failed');
      });
    }
    this.chain = this.chain.then(write).catch((err: unknown) => {
      this.log.error({ err, session: this.uid }, 'session journal write failed');
    });
  }

  /** Flushes everything and marks the session closed; resolves when the store has it. */
  end(): Promise<void> {
    if (this.ended) return this.chain;
    for (const [seat, decoder] of this.decoders) {
      const rest = decoder.end();
      if (rest) this.records.push({ seat, message: rest, time: new Date(), width: 0, height: 0 });
    }
    this.flush();
    this.ended = true;
    // Nothing was ever written: no row to close.
    if (this.opened) this.enqueue(() => this.sessions.markClosed(this.tenantId, this.uid));
    return this.chain;
  }
}
