import { randomUUID } from 'node:crypto';
import type { PassThrough } from 'node:stream';
import type { Cache, Logger } from '@gatehouse/core';
import type { SessionJournal } from './journal';

/**
 * Watching a live session (docs/content/developers/gateway.md, "Watching a session"). The server carrying the
 * session and the watcher's server may be two instances: they speak through the shared cache (Redis), on two
 * channels.
 *
 * - `sessions:watch`: watchers say they are here (every WATCHER_BEAT_MS while they stay) or gone. Every server
 *   hears it; the one carrying the session answers.
 * - `sessions:live:<uid>`: the carrying server's word to the session's watchers: the sync point of a new watcher,
 *   output and size changes of the recorded seats, the list of watchers, and the end.
 *
 * Only recorded output is shown: a watcher first reads the recording so far from the store, up to the sync point,
 * then follows the output from there, so it sees what the person at the client saw, each byte once.
 */

const WATCH_CHANNEL = 'sessions:watch';
const liveChannel = (uid: string) => `sessions:live:${uid}`;

/** How often a watcher says it is still here, and how long the carrying server believes it without hearing again. */
const WATCHER_BEAT_MS = 15_000;
const WATCHER_TTL_MS = 3 * WATCHER_BEAT_MS;
/** The most watchers of one session at a time; one more is refused (429). */
export const MAX_WATCHERS = 16;
/** Output within this long of the first unsent chunk goes to watchers in one message, up to this many bytes. */
const COALESCE_MS = 15;
const COALESCE_BYTES = 64 * 1024;
/** How long a watcher must be gone before the person at the client reads that they stopped watching. */
const LEAVE_GRACE_MS = 3_000;
/** How long a new watcher waits for the carrying server's sync point, and then for the store to hold it. */
const SYNC_WAIT_MS = 5_000;
const STORE_WAIT_MS = 5_000;

/**
 * Output goes to watchers as bytes, not JSON: a frame of this type, the seat (32 bits), the width and height (16
 * bits each), then the output. Encoding tens of megabytes a second as base64 in JSON was most of what a watcher
 * cost the session's server (bench/RESULTS.md, "Watching a live session"). Control messages are JSON text, which
 * starts with `{`.
 */
const OUTPUT_FRAME = 0x01;
const FRAME_HEAD = 9;

/** The Server-Sent Event of an output frame, made once per frame however many watchers of this server send it. */
const frameEvents = new WeakMap<Buffer, { seat: number; event: string }>();

function frameEvent(frame: Buffer): { seat: number; event: string } {
  let known = frameEvents.get(frame);
  if (!known) {
    const seat = frame.readUInt32BE(1);
    const width = frame.readUInt16BE(5);
    const height = frame.readUInt16BE(7);
    // base64 needs no escaping in JSON: the event is written without serialising the output again.
    const data = frame.subarray(FRAME_HEAD).toString('base64');
    known = {
      seat,
      event: `data: {"type":"out","seat":${seat},"width":${width},"height":${height},"data":"${data}"}\n\n`,
    };
    frameEvents.set(frame, known);
  }
  return known;
}

/** A watcher's word on the watch channel. */
interface WatchCall {
  uid: string;
  watcher: string;
  name: string;
  on: boolean;
}

/** The carrying server's word on a session's live channel. */
type LiveMessage =
  | { type: 'sync'; watcher: string; entries: Record<string, number> }
  | { type: 'full'; watcher: string }
  | { type: 'out'; seat: number; width: number; height: number; data: string }
  | { type: 'size'; seat: number; width: number; height: number }
  | { type: 'watchers'; names: string[] }
  | { type: 'end'; reason?: 'revoked' | 'expired' | 'behind' };

function parse<T>(message: string): T | undefined {
  try {
    const value = JSON.parse(message) as unknown;
    return value && typeof value === 'object' ? (value as T) : undefined;
  } catch {
    return undefined;
  }
}

function isWatchCall(value: Partial<WatchCall> | undefined): value is WatchCall {
  return (
    typeof value?.uid === 'string' &&
    typeof value.watcher === 'string' &&
    typeof value.name === 'string' &&
    typeof value.on === 'boolean'
  );
}

/**
 * The watches of the sessions this server carries: it hears the watch channel for them, taps their journals while
 * anyone watches, and tells the person at the client who starts and stops watching.
 */
export class CarriedWatches {
  private readonly sessions = new Map<string, CarriedWatch>();
  private unsubscribe: (() => Promise<void>) | undefined;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly cache: Cache,
    private readonly log: Logger,
  ) {}

  async listen(): Promise<void> {
    this.unsubscribe ??= await this.cache.subscribe(WATCH_CHANNEL, (message) => {
      const call = parse<Partial<WatchCall>>(message);
      if (isWatchCall(call)) this.sessions.get(call.uid)?.heard(call);
    });
    this.sweeper ??= setInterval(() => {
      for (const watch of this.sessions.values()) watch.sweep(Date.now());
    }, WATCHER_BEAT_MS).unref();
  }

  /** A session this server now carries: `say` writes one line to the person at the client. */
  add(uid: string, journal: SessionJournal, say: (line: string) => void): void {
    const failed = (err: unknown) =>
      this.log.warn({ err, session: uid }, 'could not reach the watchers of a session');
    this.sessions.set(
      uid,
      new CarriedWatch(
        journal,
        say,
        (message) => void this.cache.publish(liveChannel(uid), JSON.stringify(message)).catch(failed),
        (frame) => void this.cache.publishBytes(liveChannel(uid), frame).catch(failed),
      ),
    );
  }

  /** The session ended here: its watchers are told, and the tap comes off. */
  delete(uid: string): void {
    this.sessions.get(uid)?.end();
    this.sessions.delete(uid);
  }

  async stop(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    for (const uid of [...this.sessions.keys()]) this.delete(uid);
    const unsubscribe = this.unsubscribe;
    this.unsubscribe = undefined;
    await unsubscribe?.().catch(() => {});
  }
}

/** One carried session's watchers and the output on its way to them. */
class CarriedWatch {
  private readonly watchers = new Map<string, { name: string; until: number }>();
  /** Watchers by name (one person may watch from two tabs), and the "stopped watching" lines not yet said. */
  private readonly byName = new Map<string, number>();
  private readonly leaving = new Map<string, NodeJS.Timeout>();
  /** The frame being filled: its seat and size, and how much of it holds output. */
  private unsent: { seat: number; width: number; height: number; frame: Buffer; used: number } | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly journal: SessionJournal,
    private readonly say: (line: string) => void,
    private readonly publish: (message: LiveMessage) => void,
    private readonly publishFrame: (frame: Buffer) => void,
  ) {}

  heard(call: WatchCall): void {
    const known = this.watchers.get(call.watcher);
    if (!call.on) {
      if (known) this.leave(call.watcher, known.name);
      return;
    }
    if (known) {
      known.until = Date.now() + WATCHER_TTL_MS;
      return;
    }
    if (this.watchers.size >= MAX_WATCHERS) {
      this.publish({ type: 'full', watcher: call.watcher });
      return;
    }
    this.watchers.set(call.watcher, { name: call.name, until: Date.now() + WATCHER_TTL_MS });
    this.journal.tap ??= (seat, chunk, width, height) => this.passed(seat, chunk, width, height);
    // What is on its way to the other watchers goes first: the new one skips it, as its sync point includes it.
    this.send();
    this.publish({ type: 'sync', watcher: call.watcher, entries: this.journal.syncPoint() });
    this.joined(call.name);
    this.announce();
  }

  /** Watchers not heard from for a while (their server stopped) are gone. */
  sweep(now: number): void {
    for (const [id, watcher] of this.watchers) if (watcher.until < now) this.leave(id, watcher.name);
  }

  private leave(id: string, name: string): void {
    this.watchers.delete(id);
    this.left(name);
    this.announce();
    if (this.watchers.size === 0) this.untap();
  }

  /**
   * The person at the client reads who starts watching at once, and who stopped once they have been gone for a
   * moment: someone back within it was never said to be gone, so a link opened and closed in a loop writes one line,
   * and no watcher is ever unannounced.
   */
  private joined(name: string): void {
    this.byName.set(name, (this.byName.get(name) ?? 0) + 1);
    const pending = this.leaving.get(name);
    if (pending) {
      clearTimeout(pending);
      this.leaving.delete(name);
      return;
    }
    if (this.byName.get(name) === 1) this.say(`gatehouse: ${name} is watching this session`);
  }

  private left(name: string): void {
    const count = (this.byName.get(name) ?? 1) - 1;
    if (count > 0) {
      this.byName.set(name, count);
      return;
    }
    this.byName.delete(name);
    const timer = setTimeout(() => {
      this.leaving.delete(name);
      this.say(`gatehouse: ${name} stopped watching this session`);
    }, LEAVE_GRACE_MS);
    timer.unref();
    this.leaving.set(name, timer);
  }

  private announce(): void {
    this.publish({ type: 'watchers', names: [...this.watchers.values()].map((w) => w.name) });
  }

  private passed(seat: number, chunk: Buffer | undefined, width: number, height: number): void {
    const open = this.unsent;
    if (open && (open.seat !== seat || open.width !== width || open.height !== height)) this.send();
    if (!chunk) {
      this.publish({ type: 'size', seat, width, height });
      return;
    }
    if (this.unsent && this.unsent.frame.length - this.unsent.used < chunk.length) this.send();
    let unsent = this.unsent;
    if (!unsent) {
      // Copied into the frame as it passes: the chunk's buffer belongs to the stream it came from.
      const frame = Buffer.allocUnsafe(FRAME_HEAD + Math.max(COALESCE_BYTES, chunk.length));
      frame[0] = OUTPUT_FRAME;
      frame.writeUInt32BE(seat, 1);
      frame.writeUInt16BE(Math.min(width, 0xffff), 5);
      frame.writeUInt16BE(Math.min(height, 0xffff), 7);
      unsent = { seat, width, height, frame, used: FRAME_HEAD };
      this.unsent = unsent;
      this.timer = setTimeout(() => this.send(), COALESCE_MS);
    }
    chunk.copy(unsent.frame, unsent.used);
    unsent.used += chunk.length;
    if (unsent.used >= unsent.frame.length) this.send();
  }

  private send(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const unsent = this.unsent;
    this.unsent = undefined;
    if (unsent) this.publishFrame(unsent.frame.subarray(0, unsent.used));
  }

  private untap(): void {
    this.send();
    this.journal.tap = undefined;
  }

  end(): void {
    for (const timer of this.leaving.values()) clearTimeout(timer);
    this.leaving.clear();
    this.untap();
    if (this.watchers.size > 0) this.publish({ type: 'end' });
    this.watchers.clear();
  }
}

/** One recording entry as a watcher's history needs it. */
export interface HistoryEntry {
  id: number;
  message: string;
  width: number;
  height: number;
}

/** The seat's recording as the store has it: how many entries, and a page of them after an entry's id. */
export interface HistorySource {
  count(): Promise<number>;
  page(afterId: number, limit: number): Promise<HistoryEntry[]>;
}

/** Why a watch could not start, for the route to answer. */
export type WatchRefusal = 'not-live' | 'full' | 'unavailable';

/** Why a stream ended, when not because the session did. */
type EndReason = 'revoked' | 'expired' | 'behind';

/** History is read this many entries at a time. */
const HISTORY_PAGE = 500;
/**
 * What a watcher's stream may hold unsent (a reader that does not keep up): the history waits for it to drain, and
 * live output past it ends the stream (`end` with reason `behind`; the console offers to watch again).
 */
const MOST_UNSENT = 8 * 1024 * 1024;

/**
 * A watcher of one seat of a session, on whichever server: joins through the watch channel, waits for its sync
 * point, sends the recording up to it and then the live output to `out` as Server-Sent Events, until the session
 * ends, `out` closes, or a heartbeat finds the caller no longer allowed or the session no longer live.
 */
export class SessionWatcher {
  private readonly id = randomUUID();
  private synced: Record<string, number> | undefined;
  private started = false;
  private waiting: Buffer[] = [];
  private out: PassThrough | undefined;
  private unsubscribe: (() => Promise<void>) | undefined;
  private beat: NodeJS.Timeout | undefined;
  private done = false;
  private onSync: ((result: 'synced' | 'full' | 'ended') => void) | undefined;

  constructor(
    private readonly deps: {
      cache: Cache;
      log: Logger;
      uid: string;
      seat: number;
      /** Shown to the person at the client and to the other watchers. */
      name: string;
      history: HistorySource;
      allowed: () => Promise<boolean>;
      /** Whether the session is still open: a gateway that died sends no end, and its sessions are closed. */
      live: () => Promise<boolean>;
      /** The names of the other watchers are not for this one (a share link's viewer, who has no account). */
      anonymous?: boolean;
    },
  ) {}

  /** Joins the session's watchers; resolves once the history is ready to send, or with why not. */
  async start(): Promise<WatchRefusal | undefined> {
    try {
      this.unsubscribe = await this.deps.cache.subscribeBytes(liveChannel(this.deps.uid), (m) =>
        this.heard(m),
      );
      const synced = new Promise<'synced' | 'full' | 'ended' | 'late'>((resolve) => {
        this.onSync = resolve;
        setTimeout(() => resolve('late'), SYNC_WAIT_MS).unref();
      });
      await this.call(true);
      const result = await synced;
      this.onSync = undefined;
      if (result !== 'synced') {
        await this.stop();
        return result === 'full' ? 'full' : 'not-live';
      }
    } catch (err) {
      this.deps.log.warn({ err, session: this.deps.uid }, 'could not start watching a session');
      await this.stop();
      return 'unavailable';
    }
    return undefined;
  }

  /** Sends the history and then the live output to `out`. */
  async follow(out: PassThrough): Promise<void> {
    this.out = out;
    out.once('close', () => void this.stop());
    out.write('retry: 2000\n: watching\n\n');
    try {
      await this.sendHistory(out);
    } catch (err) {
      this.deps.log.warn({ err, session: this.deps.uid }, 'could not read the history of a watched session');
    }
    // The stream may have closed while the history was read: nothing more is started for it.
    if (this.done) return;
    this.started = true;
    for (const message of this.waiting.splice(0)) this.forward(message);
    this.beat = setInterval(() => void this.heartbeat(), WATCHER_BEAT_MS).unref();
  }

  /**
   * The recording up to the sync point, a page at a time, each written once the reader has taken most of the one
   * before: a long recording is never read whole into memory, nor queued whole for a slow reader.
   */
  private async sendHistory(out: PassThrough): Promise<void> {
    const wanted = this.synced?.[String(this.deps.seat)] ?? 0;
    if (wanted === 0) return;
    // The sync point's entries may still be on their way to the store.
    const until = Date.now() + STORE_WAIT_MS;
    while (!this.done && (await this.deps.history.count()) < wanted && Date.now() < until)
      await new Promise((r) => setTimeout(r, 100));
    let sent = 0;
    let after = 0;
    while (!this.done && sent < wanted) {
      const page = await this.deps.history.page(after, Math.min(HISTORY_PAGE, wanted - sent));
      if (page.length === 0) break;
      for (const entry of page) {
        if (entry.message === '')
          this.write({ type: 'size', seat: this.deps.seat, width: entry.width, height: entry.height });
        else
          this.write({
            type: 'out',
            seat: this.deps.seat,
            width: entry.width,
            height: entry.height,
            data: Buffer.from(entry.message, 'utf8').toString('base64'),
          });
      }
      sent += page.length;
      after = (page.at(-1) as HistoryEntry).id;
      if (out.writableLength > MOST_UNSENT / 2 && !this.done)
        await new Promise<void>((resolve) => {
          out.once('drain', resolve);
          out.once('close', resolve);
        });
    }
  }

  private heard(message: Buffer): void {
    if (message[0] === OUTPUT_FRAME) {
      // Output before the sync point is in the history.
      if (!this.synced) return;
      if (!this.started) this.waiting.push(message);
      else this.forward(message);
      return;
    }
    const parsed = parse<LiveMessage>(message.toString());
    if (!parsed) return;
    if (!this.synced) {
      // Before its sync point a watcher only waits for it: what came before is in the history.
      if (parsed.type === 'sync' && parsed.watcher === this.id) {
        this.synced = parsed.entries && typeof parsed.entries === 'object' ? parsed.entries : {};
        this.onSync?.('synced');
      } else if (parsed.type === 'full' && parsed.watcher === this.id) this.onSync?.('full');
      else if (parsed.type === 'end') this.onSync?.('ended');
      return;
    }
    if (!this.started) this.waiting.push(message);
    else this.forward(message);
  }

  private forward(message: Buffer): void {
    if (message[0] === OUTPUT_FRAME) {
      if (message.length < FRAME_HEAD) return;
      const { seat, event } = frameEvent(message);
      if (seat === this.deps.seat) this.send(event);
      return;
    }
    const parsed = parse<LiveMessage>(message.toString());
    if (!parsed) return;
    if (parsed.type === 'size') {
      if (parsed.seat === this.deps.seat) this.write(parsed);
    } else if (parsed.type === 'watchers') {
      const names = Array.isArray(parsed.names) ? parsed.names.map(String) : [];
      this.write({
        type: 'watchers',
        names: this.deps.anonymous
          ? names.map((n) => (n === this.deps.name ? n : 'a member of the namespace'))
          : names,
      });
    } else if (parsed.type === 'end') {
      this.write({ type: 'end' });
      this.out?.end();
      void this.stop();
    }
  }

  /** Ends the stream from outside (a share link revoked or expired): says why, then closes. */
  finish(reason: EndReason): void {
    if (this.done) return;
    this.write({ type: 'end', reason });
    this.out?.end();
    void this.stop();
  }

  private write(message: LiveMessage): void {
    this.send(`data: ${JSON.stringify(message)}\n\n`);
  }

  /** Writes one event; a reader that lets more than the most pile up is dropped, with the reason. */
  private send(event: string): void {
    const out = this.out;
    if (!out || out.destroyed || this.done) return;
    if (this.started && out.writableLength > MOST_UNSENT) {
      out.write(`data: ${JSON.stringify({ type: 'end', reason: 'behind' })}\n\n`);
      out.end();
      void this.stop();
      return;
    }
    out.write(event);
  }

  private async heartbeat(): Promise<void> {
    if (this.done) return;
    const [allowed, live] = await Promise.all([
      this.deps.allowed().catch(() => false),
      this.deps.live().catch(() => true),
    ]);
    if (this.done) return;
    if (!allowed || !live) {
      if (!live) this.write({ type: 'end' });
      this.out?.end();
      await this.stop();
      return;
    }
    this.out?.write(': heartbeat\n\n');
    await this.call(true).catch(() => {});
  }

  private call(on: boolean): Promise<void> {
    const call: WatchCall = { uid: this.deps.uid, watcher: this.id, name: this.deps.name, on };
    return this.deps.cache.publish(WATCH_CHANNEL, JSON.stringify(call));
  }

  async stop(): Promise<void> {
    if (this.done) return;
    this.done = true;
    if (this.beat) clearInterval(this.beat);
    this.beat = undefined;
    const unsubscribe = this.unsubscribe;
    this.unsubscribe = undefined;
    await Promise.all([this.call(false).catch(() => {}), unsubscribe?.().catch(() => {})]);
  }
}
