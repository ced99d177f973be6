import type { Cache, Logger } from '@gatehouse/core';
import { LIVE_WINDOW_SECONDS, type LiveSessionCloser, type SessionService } from '../sessions/service';

/**
 * How often this server vouches for its live sessions; a session not vouched for within the sessions' live window
 * (five heartbeats) is closed, so `active` in answers and the sweep agree.
 */
const HEARTBEAT_SECONDS = 60;
const STALE_SECONDS = LIVE_WINDOW_SECONDS;

/** Where a close call is announced to every server, for the one carrying the session. */
const CLOSE_CHANNEL = 'sessions:close';

/**
 * The sessions this server's gateway is carrying: the close call ends one (SPEC.md section 7), and a heartbeat
 * keeps their `last_seen` fresh so that sessions of a server that died are closed by the survivors. A close call
 * may land on any server: one that does not carry the session announces it through the shared cache (Redis), and
 * the server that carries it ends it.
 */
export class LiveSessions implements LiveSessionCloser {
  private readonly ends = new Map<string, () => void>();
  private readonly log: Logger;
  private readonly cache: Cache;
  private readonly sessions: () => SessionService;
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => Promise<void>) | undefined;

  constructor(deps: {
    log: Logger;
    cache: Cache;
    kernel: { container: { resolve(name: 'sessions'): SessionService } };
  }) {
    this.log = deps.log;
    this.cache = deps.cache;
    // Resolved late: the sessions service itself depends on this registry.
    this.sessions = () => deps.kernel.container.resolve('sessions');
  }

  /** Starts hearing close calls answered by other servers (at boot, before the gateway takes connections). */
  async listen(): Promise<void> {
    this.unsubscribe ??= await this.cache.subscribe(CLOSE_CHANNEL, (uid) => {
      this.end(uid);
    });
  }

  add(uid: string, end: () => void): void {
    this.ends.set(uid, end);
    this.timer ??= setInterval(() => void this.heartbeat(), HEARTBEAT_SECONDS * 1000).unref();
  }

  delete(uid: string): void {
    this.ends.delete(uid);
  }

  /** Ends the session here if this server carries it, otherwise asks the server that does. */
  async close(uid: string): Promise<void> {
    if (this.end(uid)) return;
    await this.cache.publish(CLOSE_CHANNEL, uid);
  }

  private end(uid: string): boolean {
    const end = this.ends.get(uid);
    if (!end) return false;
    end();
    return true;
  }

  uids(): string[] {
    return [...this.ends.keys()];
  }

  private async heartbeat(): Promise<void> {
    try {
      await this.sessions().touch(this.uids());
      await this.sessions().closeStale(STALE_SECONDS);
    } catch (err) {
      this.log.warn({ err }, 'session heartbeat failed');
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    const unsubscribe = this.unsubscribe;
    this.unsubscribe = undefined;
    unsubscribe?.().catch((err: unknown) => this.log.warn({ err }, 'could not stop hearing close calls'));
    for (const end of [...this.ends.values()]) end();
    this.ends.clear();
  }
}
