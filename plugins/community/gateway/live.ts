import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Cache, Config, Logger } from '@gatehouse/core';
import { LIVE_WINDOW_SECONDS, type LiveSessionCloser, type SessionService } from '../sessions/service';
import type { SessionJournal } from './journal';
import { CarriedWatches } from './watch';

/**
 * How often this server vouches for its live sessions; a session not vouched for within the sessions' live window
 * (five heartbeats) is closed, so `active` in answers and the sweep agree.
 */
const HEARTBEAT_SECONDS = 60;
const STALE_SECONDS = LIVE_WINDOW_SECONDS;
/** How often an instance says it is alive, and how long that word holds. */
const ALIVE_SECONDS = 20;
const ALIVE_TTL_SECONDS = 60;
const ALIVE_KEY = (instance: string) => `gateway:alive:${instance}`;
const INSTANCE_FILE = 'gateway-instance';

/**
 * The name this server's gateway writes on the sessions it carries: kept in the data directory, so the same
 * server started again after a crash knows the sessions it left open (each instance of a scale-out has its own
 * data directory, and so its own name).
 */
export function gatewayInstance(dataDir: string): string {
  const file = path.join(dataDir, INSTANCE_FILE);
  try {
    const id = readFileSync(file, 'utf8').trim();
    if (/^[0-9a-f]{32}$/.test(id)) return id;
  } catch {
    // First start: made below.
  }
  const id = randomBytes(16).toString('hex');
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(file, `${id}\n`, { mode: 0o600 });
  return id;
}

/** Where a close call is announced to every server, for the one carrying the session. */
const CLOSE_CHANNEL = 'sessions:close';

/** Ends one session this server carries, first showing `notice` (one line) to the person in it. */
export type SessionEnd = (notice?: string) => void;

/** A close call as it travels between servers: `{"uid","notice"}`, or the bare uid that older servers send. */
function closeMessage(message: string): { uid: string; notice?: string } | undefined {
  if (!message.startsWith('{')) return { uid: message };
  try {
    const parsed = JSON.parse(message) as { uid?: unknown; notice?: unknown };
    if (typeof parsed.uid !== 'string') return undefined;
    return typeof parsed.notice === 'string'
      ? { uid: parsed.uid, notice: parsed.notice }
      : { uid: parsed.uid };
  } catch {
    return undefined;
  }
}

/**
 * The sessions this server's gateway is carrying: the close call ends one, and a heartbeat
 * keeps their `last_seen` fresh so that sessions of a server that died are closed by the survivors. A close call
 * may land on any server: one that does not carry the session announces it through the shared cache (Redis), and
 * the server that carries it ends it.
 */
export class LiveSessions implements LiveSessionCloser {
  private readonly ends = new Map<string, SessionEnd>();
  private readonly log: Logger;
  private readonly cache: Cache;
  private readonly sessions: SessionService;
  private timer: NodeJS.Timeout | undefined;
  private aliveTimer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => Promise<void>) | undefined;
  /** This gateway instance (see gatewayInstance). */
  readonly instance: string;
  /** Who watches the sessions this server carries (watch.ts). */
  readonly watches: CarriedWatches;

  constructor(deps: { log: Logger; cache: Cache; config: Config; sessions: SessionService }) {
    this.log = deps.log;
    this.cache = deps.cache;
    this.instance = gatewayInstance(deps.config.dataDir);
    this.sessions = deps.sessions;
    this.watches = new CarriedWatches(deps.cache, deps.log);
  }

  /**
   * At boot, before the gateway takes connections: says this instance is alive, closes the sessions nobody carries
   * any more (its own from before a crash, and those of instances that stopped saying they are alive), and starts
   * hearing close calls answered by other servers.
   */
  async listen(): Promise<void> {
    await this.sayAlive();
    const closed = await this.sessions.closeOrphans(this.instance, (other) => this.isAlive(other));
    if (closed > 0) this.log.info({ closed }, 'closed sessions left open by a gateway that is gone');
    this.aliveTimer ??= setInterval(() => void this.vouch(), ALIVE_SECONDS * 1000).unref();
    this.unsubscribe ??= await this.cache.subscribe(CLOSE_CHANNEL, (message) => {
      const call = closeMessage(message);
      if (call) this.end(call.uid, call.notice);
    });
    await this.watches.listen();
  }

  private async sayAlive(): Promise<void> {
    await this.cache.set(ALIVE_KEY(this.instance), String(Date.now()), ALIVE_TTL_SECONDS);
  }

  private async isAlive(instance: string): Promise<boolean> {
    return (await this.cache.get(ALIVE_KEY(instance))) !== null;
  }

  /** Every few seconds: still alive, and the sessions of instances that are not are closed. */
  private async vouch(): Promise<void> {
    try {
      await this.sayAlive();
      await this.sessions.closeOrphans(null, (other) =>
        other === this.instance ? Promise.resolve(true) : this.isAlive(other),
      );
    } catch (err) {
      this.log.warn({ err }, 'gateway instance heartbeat failed');
    }
  }

  /**
   * A session this server now carries. With `watch`, it may be watched: its journal is tapped while anyone does,
   * and `say` tells the person at the client who starts and stops watching.
   */
  add(uid: string, end: SessionEnd, watch?: { journal: SessionJournal; say: (line: string) => void }): void {
    this.ends.set(uid, end);
    if (watch) this.watches.add(uid, watch.journal, watch.say);
    this.timer ??= setInterval(() => void this.heartbeat(), HEARTBEAT_SECONDS * 1000).unref();
  }

  delete(uid: string): void {
    this.ends.delete(uid);
    this.watches.delete(uid);
  }

  /** Ends the session here if this server carries it, otherwise asks the server that does. */
  async close(uid: string, notice?: string): Promise<void> {
    if (this.end(uid, notice)) return;
    await this.cache.publish(CLOSE_CHANNEL, JSON.stringify(notice === undefined ? { uid } : { uid, notice }));
  }

  private end(uid: string, notice?: string): boolean {
    const end = this.ends.get(uid);
    if (!end) return false;
    end(notice);
    return true;
  }

  uids(): string[] {
    return [...this.ends.keys()];
  }

  private async heartbeat(): Promise<void> {
    try {
      await this.sessions.touch(this.uids());
      await this.sessions.closeStale(STALE_SECONDS);
    } catch (err) {
      this.log.warn({ err }, 'session heartbeat failed');
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.aliveTimer) clearInterval(this.aliveTimer);
    // A clean stop closes its sessions below; the others need not wait for the word to lapse.
    await this.cache.del(ALIVE_KEY(this.instance)).catch(() => {});
    const unsubscribe = this.unsubscribe;
    this.unsubscribe = undefined;
    unsubscribe?.().catch((err: unknown) => this.log.warn({ err }, 'could not stop hearing close calls'));
    for (const end of [...this.ends.values()]) end();
    this.ends.clear();
    await this.watches.stop();
  }
}
