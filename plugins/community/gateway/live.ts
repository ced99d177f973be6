import type { Logger } from '@gatehouse/core';
import { LIVE_WINDOW_SECONDS, type LiveSessionCloser, type SessionService } from '../sessions/service';

/**
 * How often this server vouches for its live sessions; a session not vouched for within the sessions' live window
 * (five heartbeats) is closed, so `active` in answers and the sweep agree.
 */
const HEARTBEAT_SECONDS = 60;
const STALE_SECONDS = LIVE_WINDOW_SECONDS;

/**
 * The sessions this server's gateway is carrying: the close call ends one (SPEC.md section 7), and a heartbeat
 * keeps their `last_seen` fresh so that sessions of a server that died are closed by the survivors.
 */
export class LiveSessions implements LiveSessionCloser {
  private readonly ends = new Map<string, () => void>();
  private readonly log: Logger;
  private readonly sessions: () => SessionService;
  private timer: NodeJS.Timeout | undefined;

  constructor(deps: { log: Logger; kernel: { container: { resolve(name: 'sessions'): SessionService } } }) {
    this.log = deps.log;
    // Resolved late: the sessions service itself depends on this registry.
    this.sessions = () => deps.kernel.container.resolve('sessions');
  }

  add(uid: string, end: () => void): void {
    this.ends.set(uid, end);
    this.timer ??= setInterval(() => void this.heartbeat(), HEARTBEAT_SECONDS * 1000).unref();
  }

  delete(uid: string): void {
    this.ends.delete(uid);
  }

  close(uid: string): boolean {
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
    for (const end of [...this.ends.values()]) end();
    this.ends.clear();
  }
}
