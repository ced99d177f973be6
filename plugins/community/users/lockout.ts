import { type AtomicStep, type Cache, type Config, TooManyRequests } from '@gatehouse/core';

/** Failures are forgotten a day after the last one. */
const MEMORY_SECONDS = 86_400;
/**
 * How long a guess may stay "being checked" if its server dies before settling it. Longer than any check takes,
 * the wait for a password-hashing slot included.
 */
const IN_FLIGHT_SECONDS = 120;

/**
 * Admits one guess, in one step: refused while the pair is locked (answer 1 = the lock's end), refused while
 * earlier guesses still being checked could reach the threshold if they all fail (answer 2), otherwise counted as
 * in flight (answer 0) before any password hash is spent. Keys: failures, lock end, in flight.
 * Args: now (unix seconds), threshold.
 */
const admit: AtomicStep = {
  name: 'lockout_admit',
  lua: `
local now = tonumber(ARGV[1])
local threshold = tonumber(ARGV[2])
local lock = tonumber(redis.call('GET', KEYS[2]) or '0')
if lock > now then return {1, lock} end
local failures = tonumber(redis.call('GET', KEYS[1]) or '0')
local flying = tonumber(redis.call('GET', KEYS[3]) or '0')
if flying > 0 and failures + flying >= threshold then return {2, 0} end
redis.call('INCR', KEYS[3])
redis.call('EXPIRE', KEYS[3], ${IN_FLIGHT_SECONDS})
return {0, 0}`,
  memory(entries, [failuresKey, lockKey, flyingKey], [now, threshold]) {
    const lock = Number(entries.get(lockKey as string) ?? 0);
    if (lock > Number(now)) return [1, lock];
    const failures = Number(entries.get(failuresKey as string) ?? 0);
    const flying = Number(entries.get(flyingKey as string) ?? 0);
    if (flying > 0 && failures + flying >= Number(threshold)) return [2, 0];
    entries.set(flyingKey as string, String(flying + 1), IN_FLIGHT_SECONDS);
    return [0, 0];
  },
};

/**
 * Settles an admitted guess. Args: outcome (1 success, 0 failure, -1 not decided, e.g. the check itself failed),
 * now, threshold, longest lock in minutes. A failure counts and, from the threshold on, locks for
 * min(4^(n - threshold), max) minutes; answers the lock's end (0 when none). A success clears the pair.
 */
const settle: AtomicStep = {
  name: 'lockout_settle',
  lua: `
local outcome = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local threshold = tonumber(ARGV[3])
local maxMinutes = tonumber(ARGV[4])
local flying = tonumber(redis.call('GET', KEYS[3]) or '0')
if flying <= 1 then redis.call('DEL', KEYS[3]) else redis.call('DECR', KEYS[3]) end
if outcome == 1 then
  redis.call('DEL', KEYS[1], KEYS[2])
  return {0}
end
if outcome ~= 0 then return {0} end
local n = redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], ${MEMORY_SECONDS})
if n < threshold then return {0} end
local minutes = math.min(4 ^ (n - threshold), maxMinutes)
local lock = math.ceil(now) + minutes * 60
redis.call('SET', KEYS[2], lock, 'EX', minutes * 60)
return {lock}`,
  memory(entries, [failuresKey, lockKey, flyingKey], [outcome, now, threshold, maxMinutes]) {
    const flying = Number(entries.get(flyingKey as string) ?? 0);
    if (flying <= 1) entries.del(flyingKey as string);
    else entries.set(flyingKey as string, String(flying - 1));
    if (Number(outcome) === 1) {
      entries.del(failuresKey as string);
      entries.del(lockKey as string);
      return [0];
    }
    if (Number(outcome) !== 0) return [0];
    const n = Number(entries.get(failuresKey as string) ?? 0) + 1;
    entries.set(failuresKey as string, String(n), MEMORY_SECONDS);
    if (n < Number(threshold)) return [0];
    const minutes = Math.min(4 ** (n - Number(threshold)), Number(maxMinutes));
    const lock = Math.ceil(Number(now)) + minutes * 60;
    entries.set(lockKey as string, String(lock), minutes * 60);
    return [lock];
  },
};

/** The answer to a guess: whether the secret was right, and the end of the lock a wrong one caused (0 none). */
export interface Guess {
  ok: boolean;
  lockedUntil: number;
}

/**
 * Consecutive-failure lockout for a (source address, subject) pair. From the
 * `auth.lockoutThreshold`-th failure the pair is locked for min(4^(n - threshold), `auth.lockoutMaxMinutes`)
 * minutes; success resets it. Counters live in the cache: Redis when configured, so every instance sees them.
 * `scope` keeps password, MFA-code and recovery-code attempts apart.
 *
 * Check and count are one atomic step (`admit`), taken before the secret is checked: a guess is counted as in flight
 * before its hash is spent, and a guess that would pass the threshold should the ones in flight fail waits its turn
 * (429). So parallel guesses get no more tries than sequential ones.
 */
export class Lockout {
  private readonly cache: Cache;
  private readonly threshold: number;
  private readonly maxMinutes: number;

  constructor(deps: { cache: Cache; config: Config }) {
    this.cache = deps.cache;
    this.threshold = deps.config.auth.lockoutThreshold;
    this.maxMinutes = deps.config.auth.lockoutMaxMinutes;
  }

  private keys(scope: string, source: string, subject: string): string[] {
    const base = `lockout:${scope}:${source}:${subject.toLowerCase()}`;
    return [`${base}:n`, `${base}:until`, `${base}:flying`];
  }

  /**
   * Checks one guess of a secret for the pair: 429 (`lockedOut`) without calling `check` when the pair is locked or
   * too many guesses are in flight; otherwise runs `check` and counts its answer.
   */
  async guess(scope: string, source: string, subject: string, check: () => Promise<boolean>): Promise<Guess> {
    const keys = this.keys(scope, source, subject);
    const now = Date.now() / 1000;
    const [verdict, lock] = await this.cache.atomic(admit, keys, [now, this.threshold]);
    if (verdict === 1) throw lockedOut(lock as number);
    // Earlier guesses of this pair are still being checked: come back once they are settled.
    if (verdict === 2) throw lockedOut(Math.ceil(now) + 1, 1);
    let ok: boolean;
    try {
      ok = await check();
    } catch (err) {
      await this.cache.atomic(settle, keys, [-1, now, this.threshold, this.maxMinutes]);
      throw err;
    }
    const [until] = await this.cache.atomic(settle, keys, [
      ok ? 1 : 0,
      Date.now() / 1000,
      this.threshold,
      this.maxMinutes,
    ]);
    return { ok, lockedUntil: until ?? 0 };
  }

  /** Forgets the pair's failures (a success proven some other way). */
  async reset(scope: string, source: string, subject: string): Promise<void> {
    for (const key of this.keys(scope, source, subject).slice(0, 2)) await this.cache.del(key);
  }
}

/**
 * 429 with the end of the lock (`X-Account-Lockout`, unix time), and `Retry-After` in seconds
 * (RFC 9110) for clients that read that instead.
 */
export function lockedOut(until: number, retryAfter?: number): TooManyRequests {
  const seconds = retryAfter ?? Math.max(1, Math.ceil(until - Date.now() / 1000));
  return new TooManyRequests('too many failed attempts; try again later', {
    'X-Account-Lockout': String(until),
    'Retry-After': String(seconds),
    'Access-Control-Expose-Headers': 'X-Account-Lockout, Retry-After',
  });
}
