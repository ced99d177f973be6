import type { PassThrough } from 'node:stream';
import type { Cache, Logger } from '@gatehouse/core';

/**
 * What a console hears about its namespace (docs/content/developers/event-stream.md): small facts, never a whole
 * entity; the console reads what it shows through the API again.
 */
export type ConsoleEvent =
  | { kind: 'device.status'; device: string; status: string }
  | { kind: 'device.online'; device: string; online: boolean }
  | { kind: 'session.started' | 'session.closed'; session: string; device?: string };

/** Where events travel between the instances sharing the cache (Redis), this one included. */
const CHANNEL = 'console:events';
/** Streams one user (or API key) may hold open at once on one instance; one more answers 429. */
export const MAX_STREAMS_PER_CALLER = 5;
/** A comment line this often keeps proxies from closing a quiet stream, and finds dead ones. */
export const HEARTBEAT_MS = 15_000;

interface Stream {
  tenantId: string;
  owner: string;
  out: PassThrough;
  /** Whether the stream's caller may still read the namespace's events (asked at every heartbeat). */
  allowed: () => Promise<boolean>;
  checking: boolean;
}

/**
 * The console's event streams held on this instance, by namespace. `publish` announces an event of one namespace
 * on the shared cache; every instance writes it to the streams it holds for that namespace, and to no other.
 */
export class ConsoleEvents {
  private readonly cache: Cache;
  private readonly log: Logger;
  private readonly byTenant = new Map<string, Set<Stream>>();
  private readonly perOwner = new Map<string, number>();
  private subscribed: Promise<() => Promise<void>> | undefined;
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(deps: { cache: Cache; log: Logger }) {
    this.cache = deps.cache;
    this.log = deps.log.child({ part: 'console-events' });
  }

  /** Announces an event of `tenantId` to every instance. Never throws: a lost event costs a console one refresh. */
  publish(tenantId: string, event: ConsoleEvent): void {
    this.cache.publish(CHANNEL, JSON.stringify({ t: tenantId, e: event })).catch((err: Error) => {
      this.log.warn({ err: err.message, kind: event.kind }, 'could not publish a console event');
    });
  }

  /** Whether `owner` may open one more stream here. */
  full(owner: string): boolean {
    return (this.perOwner.get(owner) ?? 0) >= MAX_STREAMS_PER_CALLER;
  }

  /** Listens on the shared cache (once per instance); throws when the cache cannot be listened on. */
  async listen(): Promise<void> {
    this.subscribed ??= this.cache.subscribe(CHANNEL, (message) => this.deliver(message));
    this.subscribed.catch(() => {
      this.subscribed = undefined;
    });
    await this.subscribed;
  }

  /**
   * Holds `out` open for the namespace's events until it closes, or until `allowed` answers false at a heartbeat
   * (the member was removed, the key revoked, the session signed out): then the stream ends.
   */
  add(tenantId: string, owner: string, out: PassThrough, allowed: () => Promise<boolean>): void {
    const stream: Stream = { tenantId, owner, out, allowed, checking: false };
    let set = this.byTenant.get(tenantId);
    if (!set) {
      set = new Set();
      this.byTenant.set(tenantId, set);
    }
    set.add(stream);
    this.perOwner.set(owner, (this.perOwner.get(owner) ?? 0) + 1);
    this.heartbeat ??= setInterval(() => this.beat(), HEARTBEAT_MS).unref();
    out.once('close', () => this.remove(stream));
  }

  /** Ends every stream held here (shutdown) and stops listening. */
  async stop(): Promise<void> {
    for (const set of this.byTenant.values()) for (const s of set) s.out.end();
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    const unsubscribe = await this.subscribed?.catch(() => undefined);
    this.subscribed = undefined;
    await unsubscribe?.().catch(() => {});
  }

  private remove(stream: Stream): void {
    const set = this.byTenant.get(stream.tenantId);
    if (!set?.delete(stream)) return;
    if (set.size === 0) this.byTenant.delete(stream.tenantId);
    const n = (this.perOwner.get(stream.owner) ?? 1) - 1;
    if (n <= 0) this.perOwner.delete(stream.owner);
    else this.perOwner.set(stream.owner, n);
  }

  private deliver(message: string): void {
    let parsed: { t?: unknown; e?: unknown };
    try {
      parsed = JSON.parse(message) as { t?: unknown; e?: unknown };
    } catch {
      return;
    }
    if (typeof parsed.t !== 'string' || typeof parsed.e !== 'object' || parsed.e === null) return;
    const set = this.byTenant.get(parsed.t);
    if (!set) return;
    const event = parsed.e as ConsoleEvent;
    const frame = `event: ${event.kind}\ndata: ${JSON.stringify(event)}\n\n`;
    for (const s of set) s.out.write(frame);
  }

  private beat(): void {
    for (const set of this.byTenant.values()) {
      for (const s of set) {
        s.out.write(': heartbeat\n\n');
        if (s.checking) continue;
        s.checking = true;
        s.allowed()
          .then((ok) => {
            if (!ok) s.out.end();
          })
          .catch(() => s.out.end())
          .finally(() => {
            s.checking = false;
          });
      }
    }
    if (this.byTenant.size === 0 && this.heartbeat) {
      clearInterval(this.heartbeat);
      this.heartbeat = undefined;
    }
  }
}
