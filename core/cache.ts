import { EventEmitter } from 'node:events';
import { Redis } from 'ioredis';

/**
 * The small shared-state interface Gatehouse needs: counters with expiry (lockout, rate limits) and short-lived
 * values (MFA tokens, leases). Redis when configured, otherwise an in-process map (one server only).
 */
export interface Cache {
  get(key: string): Promise<string | null>;
  /** Sets a value; `ttlSeconds` 0 keeps it until deleted. */
  set(key: string, value: string, ttlSeconds?: number): Promise<void>;
  /** Sets only when absent; true when this call set it. */
  setIfAbsent(key: string, value: string, ttlSeconds: number): Promise<boolean>;
  del(key: string): Promise<void>;
  /** Reads and deletes a value in one step: of callers racing for one key, exactly one gets it (single-use). */
  take(key: string): Promise<string | null>;
  /** Increments a counter, (re)arming its expiry, and returns the new value. */
  incr(key: string, ttlSeconds: number): Promise<number>;
  /** Remaining lifetime in seconds; -1 without expiry, -2 when absent. */
  ttl(key: string): Promise<number>;
  /**
   * Runs `step` on `keys` as one indivisible step: no other request, instance or process sees its keys half-done.
   * Check-and-count guards (lockout, rate limits) need this; separate get/incr calls let parallel requests pass.
   */
  atomic(step: AtomicStep, keys: string[], args: (string | number)[]): Promise<number[]>;
  /** Sends `message` to every subscriber of `channel` on every server sharing this cache, this one included. */
  publish(channel: string, message: string): Promise<void>;
  /** Calls `handler` with each message published on `channel`; resolves once listening, with the way to stop. */
  subscribe(channel: string, handler: (message: string) => void): Promise<() => Promise<void>>;
  /** As `publish`, with bytes (no text encoding on the way): a text subscriber hears them as UTF-8. */
  publishBytes(channel: string, message: Buffer): Promise<void>;
  /**
   * As `subscribe`, hearing each message as its bytes, text messages as their UTF-8, in the order they were
   * published. Every handler of one message is given the same Buffer.
   */
  subscribeBytes(channel: string, handler: (message: Buffer) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** Synchronous access to the in-process map, for `AtomicStep.memory`. */
export interface SyncEntries {
  get(key: string): string | null;
  /** `ttlSeconds` 0 keeps the value until deleted; a set without it keeps the entry's expiry (like Redis KEEPTTL). */
  set(key: string, value: string, ttlSeconds?: number): void;
  del(key: string): void;
  /** Remaining lifetime in whole seconds; -1 without expiry, -2 when absent. */
  ttl(key: string): number;
}

/**
 * One step of logic written twice, once per store, with the same meaning: a Lua script for Redis (which runs it
 * without interleaving other commands) and a synchronous function for the in-process map (which nothing can
 * interrupt, as it never awaits). Both get the same keys and arguments and return a list of integers.
 */
export interface AtomicStep {
  /** A name for the step, unique in the process (Redis caches the script under it). */
  name: string;
  lua: string;
  memory(entries: SyncEntries, keys: string[], args: (string | number)[]): number[];
}

export function createCache(url: string | undefined, keyPrefix = 'gatehouse:'): Cache {
  return url ? new RedisCache(url, keyPrefix) : new MemoryCache();
}

class RedisCache implements Cache {
  private readonly redis: Redis;
  private readonly keyPrefix: string;
  /** A connection in subscriber mode takes no other commands, so subscriptions get their own, opened on demand. */
  private subscriber: Redis | undefined;
  // Many handlers of one channel are the normal case (each watcher of a session): no leak warning past ten.
  private readonly channels = new EventEmitter().setMaxListeners(0);
  private readonly byteChannels = new EventEmitter().setMaxListeners(0);

  constructor(url: string, keyPrefix: string) {
    this.keyPrefix = keyPrefix;
    this.redis = new Redis(url, {
      lazyConnect: false,
      maxRetriesPerRequest: 2,
      enableAutoPipelining: true,
      keyPrefix,
    });
  }
  get(key: string) {
    return this.redis.get(key);
  }
  async set(key: string, value: string, ttlSeconds = 0) {
    if (ttlSeconds > 0) await this.redis.set(key, value, 'EX', ttlSeconds);
    else await this.redis.set(key, value);
  }
  async setIfAbsent(key: string, value: string, ttlSeconds: number) {
    return (await this.redis.set(key, value, 'EX', ttlSeconds, 'NX')) === 'OK';
  }
  async del(key: string) {
    await this.redis.del(key);
  }
  take(key: string) {
    return this.redis.getdel(key);
  }
  async incr(key: string, ttlSeconds: number) {
    const [[, n]] = (await this.redis.multi().incr(key).expire(key, ttlSeconds).exec()) as [[null, number]];
    return n;
  }
  ttl(key: string) {
    return this.redis.ttl(key);
  }
  private readonly scripts = new Set<string>();
  async atomic(step: AtomicStep, keys: string[], args: (string | number)[]) {
    const command = `gatehouse_${step.name}`;
    if (!this.scripts.has(command)) {
      this.redis.defineCommand(command, { numberOfKeys: keys.length, lua: step.lua });
      this.scripts.add(command);
    }
    const run = (this.redis as unknown as Record<string, (...a: (string | number)[]) => Promise<unknown>>)[
      command
    ] as (...a: (string | number)[]) => Promise<unknown>;
    const result = await run.call(this.redis, ...keys, ...args);
    return (Array.isArray(result) ? result : [result]).map(Number);
  }
  // Channel names are not keys, so ioredis does not prefix them: the prefix is added here, so servers of another
  // installation (or another test) on the same Redis never hear these messages.
  async publish(channel: string, message: string) {
    await this.redis.publish(this.keyPrefix + channel, message);
  }
  async publishBytes(channel: string, message: Buffer) {
    await this.redis.publish(this.keyPrefix + channel, message);
  }
  subscribe(channel: string, handler: (message: string) => void) {
    return this.listen(this.channels, channel, handler as (message: unknown) => void);
  }
  subscribeBytes(channel: string, handler: (message: Buffer) => void) {
    return this.listen(this.byteChannels, channel, handler as (message: unknown) => void);
  }
  private heard(name: string): number {
    return this.channels.listenerCount(name) + this.byteChannels.listenerCount(name);
  }
  private async listen(emitter: EventEmitter, channel: string, handler: (message: unknown) => void) {
    const name = this.keyPrefix + channel;
    if (!this.subscriber) {
      const subscriber = this.redis.duplicate({ keyPrefix: undefined, enableAutoPipelining: false });
      subscriber.on('message', (from: string, message: string) => this.channels.emit(from, message));
      subscriber.on('messageBuffer', (from: Buffer, message: Buffer) => {
        const to = from.toString();
        if (this.byteChannels.listenerCount(to) > 0) this.byteChannels.emit(to, message);
      });
      this.subscriber = subscriber;
    }
    emitter.on(name, handler);
    if (this.heard(name) === 1) await this.subscriber.subscribe(name);
    return async () => {
      emitter.off(name, handler);
      if (this.heard(name) === 0 && this.subscriber?.status === 'ready') {
        await this.subscriber.unsubscribe(name);
      }
    };
  }
  async close() {
    this.channels.removeAllListeners();
    this.byteChannels.removeAllListeners();
    if (this.subscriber) await this.subscriber.quit();
    await this.redis.quit();
  }
}

class MemoryCache implements Cache {
  private readonly entries = new Map<string, { value: string; expiresAt: number }>();
  /** One server only: a message reaches this server's own subscribers. */
  private readonly channels = new EventEmitter().setMaxListeners(0);
  private readonly byteChannels = new EventEmitter().setMaxListeners(0);
  private readonly sweeper = setInterval(() => this.sweep(), 60_000).unref();

  private live(key: string) {
    const e = this.entries.get(key);
    if (e && e.expiresAt !== 0 && e.expiresAt <= Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return e;
  }
  private sweep() {
    for (const key of this.entries.keys()) this.live(key);
  }
  async get(key: string) {
    return this.live(key)?.value ?? null;
  }
  async set(key: string, value: string, ttlSeconds = 0) {
    this.entries.set(key, { value, expiresAt: ttlSeconds > 0 ? Date.now() + ttlSeconds * 1000 : 0 });
  }
  async setIfAbsent(key: string, value: string, ttlSeconds: number) {
    if (this.live(key)) return false;
    await this.set(key, value, ttlSeconds);
    return true;
  }
  async del(key: string) {
    this.entries.delete(key);
  }
  async take(key: string) {
    const value = this.live(key)?.value ?? null;
    this.entries.delete(key);
    return value;
  }
  async incr(key: string, ttlSeconds: number) {
    const n = Number(this.live(key)?.value ?? 0) + 1;
    await this.set(key, String(n), ttlSeconds);
    return n;
  }
  async atomic(step: AtomicStep, keys: string[], args: (string | number)[]) {
    const entries: SyncEntries = {
      get: (key) => this.live(key)?.value ?? null,
      set: (key, value, ttlSeconds) => {
        const kept = ttlSeconds === undefined ? (this.live(key)?.expiresAt ?? 0) : undefined;
        this.entries.set(key, {
          value,
          expiresAt: kept ?? (ttlSeconds && ttlSeconds > 0 ? Date.now() + ttlSeconds * 1000 : 0),
        });
      },
      del: (key) => {
        this.entries.delete(key);
      },
      ttl: (key) => {
        const e = this.live(key);
        if (!e) return -2;
        return e.expiresAt === 0 ? -1 : Math.ceil((e.expiresAt - Date.now()) / 1000);
      },
    };
    return step.memory(entries, keys, args);
  }
  async ttl(key: string) {
    const e = this.live(key);
    if (!e) return -2;
    return e.expiresAt === 0 ? -1 : Math.ceil((e.expiresAt - Date.now()) / 1000);
  }
  async publish(channel: string, message: string) {
    this.channels.emit(channel, message);
    if (this.byteChannels.listenerCount(channel) > 0) this.byteChannels.emit(channel, Buffer.from(message));
  }
  async publishBytes(channel: string, message: Buffer) {
    if (this.channels.listenerCount(channel) > 0) this.channels.emit(channel, message.toString());
    this.byteChannels.emit(channel, message);
  }
  async subscribe(channel: string, handler: (message: string) => void) {
    this.channels.on(channel, handler);
    return async () => {
      this.channels.off(channel, handler);
    };
  }
  async subscribeBytes(channel: string, handler: (message: Buffer) => void) {
    this.byteChannels.on(channel, handler);
    return async () => {
      this.byteChannels.off(channel, handler);
    };
  }
  async close() {
    clearInterval(this.sweeper);
    this.entries.clear();
    this.channels.removeAllListeners();
  }
}
