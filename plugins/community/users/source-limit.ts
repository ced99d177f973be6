import { type AtomicStep, type Cache, type Config, TooManyRequests } from '@gatehouse/core';

/**
 * Takes one attempt from the source's budget of the current window, in one step: answers 0 when taken, or the
 * seconds until the window ends when the budget is spent. Keys: the window's counter. Args: budget, window seconds.
 */
const take: AtomicStep = {
  name: 'source_limit_take',
  lua: `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[2]) end
if n <= tonumber(ARGV[1]) then return 0 end
redis.call('DECR', KEYS[1])
local ttl = redis.call('TTL', KEYS[1])
if ttl < 1 then return 1 end
return ttl`,
  memory(entries, [key], [budget, window]) {
    const n = Number(entries.get(key as string) ?? 0) + 1;
    if (n > Number(budget)) return [Math.max(1, entries.ttl(key as string))];
    entries.set(key as string, String(n), n === 1 ? Number(window) : undefined);
    return [0];
  },
};

/** Gives an attempt back (it succeeded). Keys: the window's counter. */
const refund: AtomicStep = {
  name: 'source_limit_refund',
  lua: `
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n > 0 then redis.call('DECR', KEYS[1]) end
return 0`,
  memory(entries, [key]) {
    const n = Number(entries.get(key as string) ?? 0);
    if (n > 0) entries.set(key as string, String(n - 1));
    return [0];
  },
};

/**
 * Failed logins per source address, whatever user they name (`auth.loginFailuresPerSource` per
 * `auth.loginWindowSeconds`): the per-pair lockout stops guessing one account, this stops one address spraying
 * many. An attempt is taken from the budget before it is checked, so parallel attempts cannot overdraw it; one that
 * succeeds gives it back. Over budget answers 429 with `Retry-After`.
 */
export class SourceLimit {
  private readonly cache: Cache;
  private readonly budget: number;
  private readonly window: number;

  constructor(deps: { cache: Cache; config: Config }) {
    this.cache = deps.cache;
    this.budget = deps.config.auth.loginFailuresPerSource;
    this.window = deps.config.auth.loginWindowSeconds;
  }

  /** Where this source's current window is counted; IPv6 addresses count by their /64, as one host holds that. */
  private key(scope: string, source: string): string {
    return `ratelimit:${scope}:${sourceBlock(source)}`;
  }

  /** Takes an attempt (429 when the budget is spent); call `refund` to give it back (a success). */
  async take(scope: string, source: string): Promise<{ refund(): Promise<void> }> {
    if (this.budget === 0) return { refund: async () => {} };
    const key = this.key(scope, source);
    const [wait] = await this.cache.atomic(take, [key], [this.budget, this.window]);
    if (wait) {
      throw new TooManyRequests('too many failed sign-ins from your address; try again later', {
        'Retry-After': String(wait),
        'Access-Control-Expose-Headers': 'Retry-After',
      });
    }
    return {
      refund: async () => {
        await this.cache.atomic(refund, [key], []);
      },
    };
  }
}

/** The address itself for IPv4 (IPv4-mapped IPv6 included), the /64 network for IPv6. */
export function sourceBlock(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1] as string;
  if (!address.includes(':')) return address;
  const [head = '', tail = ''] = address.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = address.includes('::')
    ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
