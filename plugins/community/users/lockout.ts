import type { Cache, Config } from '@gatehouse/core';

/**
 * Consecutive-failure lockout for a (source address, subject) pair (SPEC.md section 4). From the
 * `auth.lockoutThreshold`-th failure the pair is locked for min(4^(n - threshold), `auth.lockoutMaxMinutes`)
 * minutes; success resets it. Counters live in the cache: Redis when configured, so every instance sees them.
 * `scope` keeps password, MFA-code and recovery-code attempts apart.
 */
export class Lockout {
  private readonly cache: Cache;
  private readonly threshold: number;
  private readonly maxMinutes: number;
  /** Failures are forgotten a day after the last one. */
  private readonly memorySeconds = 86_400;

  constructor(deps: { cache: Cache; config: Config }) {
    this.cache = deps.cache;
    this.threshold = deps.config.auth.lockoutThreshold;
    this.maxMinutes = deps.config.auth.lockoutMaxMinutes;
  }

  private keys(scope: string, source: string, subject: string) {
    const base = `lockout:${scope}:${source}:${subject.toLowerCase()}`;
    return { failures: `${base}:n`, until: `${base}:until` };
  }

  /** Unix time the lock ends, or 0 when the pair is not locked. */
  async lockedUntil(scope: string, source: string, subject: string): Promise<number> {
    const until = Number(await this.cache.get(this.keys(scope, source, subject).until));
    return until > Date.now() / 1000 ? until : 0;
  }

  /** Records a failure; returns the unix time the lock it causes ends, or 0 when it causes none. */
  async fail(scope: string, source: string, subject: string): Promise<number> {
    const k = this.keys(scope, source, subject);
    const n = await this.cache.incr(k.failures, this.memorySeconds);
    if (n < this.threshold) return 0;
    const minutes = Math.min(4 ** (n - this.threshold), this.maxMinutes);
    const until = Math.ceil(Date.now() / 1000) + minutes * 60;
    await this.cache.set(k.until, String(until), minutes * 60);
    return until;
  }

  async reset(scope: string, source: string, subject: string): Promise<void> {
    const k = this.keys(scope, source, subject);
    await this.cache.del(k.failures);
    await this.cache.del(k.until);
  }
}
