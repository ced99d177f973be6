import type { Cache, Logger } from '@gatehouse/core';
import type { Knex } from 'knex';

/** Where a status change of a device reaches every instance (see docs/content/developers/architecture.md), this one included. */
const STATUS_CHANNEL = 'devices:status';
/** Waits held at once on this instance; beyond it a wait answers at once and the agent falls back to its timer. */
export const MAX_WAITS = 20_000;

interface Waiter {
  uid: string;
  done: (status: string | undefined) => void;
}

/**
 * Pending agents wait here for their acceptance. A pending agent holds
 * `GET /api/devices/auth/wait`; the acceptance (or any status change) is published on the shared cache and answers
 * the waiting call on whichever instance holds it, so the agent dials its tunnel at once instead of at its next
 * availability call up to 30 s later.
 */
export class AcceptanceWaits {
  private readonly db: Knex;
  private readonly cache: Cache;
  private readonly log: Logger;
  private readonly waiters = new Map<string, Set<Waiter>>();
  private count = 0;
  private subscribed: Promise<() => Promise<void>> | undefined;
  private stopped = false;

  constructor(deps: { db: Knex; cache: Cache; log: Logger }) {
    this.db = deps.db;
    this.cache = deps.cache;
    this.log = deps.log.child({ part: 'acceptance' });
  }

  /** Tells waiting agents (on every instance) that this device's status changed. Never throws. */
  async changed(uid: string, status: string): Promise<void> {
    await this.cache.publish(STATUS_CHANNEL, `${uid} ${status}`).catch((err: Error) => {
      // The agent still learns it at its next availability call.
      this.log.warn({ err: err.message, uid }, 'could not publish a device status change');
    });
  }

  /**
   * The device's status once it is no longer pending, or after `timeoutMs`, or when `abort` fires (the agent hung
   * up) or the server stops: whichever comes first. Answers at once when the device is not pending.
   */
  async wait(tenantId: string, uid: string, timeoutMs: number, abort: AbortSignal): Promise<string> {
    if (this.stopped || this.count >= MAX_WAITS) return this.status(tenantId, uid);
    try {
      await this.subscribe();
    } catch (err) {
      // Without the shared cache nothing would wake the wait: answer now, the agent keeps its own timer.
      this.log.warn({ err: (err as Error).message }, 'cannot listen for device status changes');
      return this.status(tenantId, uid);
    }
    let waiter: Waiter | undefined;
    const woken = new Promise<string | undefined>((resolve) => {
      waiter = { uid, done: resolve };
    });
    this.add(waiter!);
    const timer = setTimeout(() => waiter!.done(undefined), timeoutMs);
    const onAbort = () => waiter!.done(undefined);
    abort.addEventListener('abort', onAbort, { once: true });
    try {
      // Read after joining: a change published between this read and the join would otherwise be missed.
      const now = await this.status(tenantId, uid);
      if (now !== 'pending') return now;
      const told = await woken;
      return told ?? (await this.status(tenantId, uid));
    } finally {
      clearTimeout(timer);
      abort.removeEventListener('abort', onAbort);
      this.remove(waiter!);
    }
  }

  /** Answers every wait held here (shutdown must not wait for them) and stops listening. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const set of this.waiters.values()) for (const w of set) w.done(undefined);
    const unsubscribe = await this.subscribed?.catch(() => undefined);
    this.subscribed = undefined;
    await unsubscribe?.().catch(() => {});
  }

  private async status(tenantId: string, uid: string): Promise<string> {
    const row = (await this.db('devices').where({ uid, tenant_id: tenantId }).first('status')) as
      | { status: string }
      | undefined;
    return row?.status ?? 'removed';
  }

  private subscribe(): Promise<() => Promise<void>> {
    this.subscribed ??= this.cache.subscribe(STATUS_CHANNEL, (message) => {
      const [uid, status] = message.split(' ');
      if (!uid || !status || status === 'pending') return;
      for (const w of this.waiters.get(uid) ?? []) w.done(status);
    });
    // A failed subscription is tried again by the next wait.
    this.subscribed.catch(() => {
      this.subscribed = undefined;
    });
    return this.subscribed;
  }

  private add(w: Waiter): void {
    let set = this.waiters.get(w.uid);
    if (!set) {
      set = new Set();
      this.waiters.set(w.uid, set);
    }
    set.add(w);
    this.count += 1;
  }

  private remove(w: Waiter): void {
    const set = this.waiters.get(w.uid);
    if (!set?.delete(w)) return;
    this.count -= 1;
    if (set.size === 0) this.waiters.delete(w.uid);
  }
}
