import { type AtomicStep, type Cache, TooManyRequests } from '@gatehouse/core';
import { sourceBlock } from '@gatehouse/plugin-community';
import type { SamlConfig } from './config';

/**
 * Counts one sign-in start against the source's budget and the installation's, in one step, when both have room.
 * Each counter covers one window of `window` seconds; a start counts in the window it was made in, and a stored
 * request lives at most one window, so the requests alive now were all made in the current or the previous
 * window: their two counters together bound them. Keys: the source's current and previous counters, then the
 * installation's. Args: the source's budget, the installation's budget, the window in seconds. Answers [0] when
 * counted, [1] when the source is over its budget, [2] when the installation is.
 */
const start: AtomicStep = {
  name: 'saml_start',
  lua: `
local function count(a, b) return tonumber(redis.call('GET', a) or '0') + tonumber(redis.call('GET', b) or '0') end
if count(KEYS[1], KEYS[2]) >= tonumber(ARGV[1]) then return 1 end
if count(KEYS[3], KEYS[4]) >= tonumber(ARGV[2]) then return 2 end
for _, key in ipairs({KEYS[1], KEYS[3]}) do
  redis.call('INCR', key)
  redis.call('EXPIRE', key, 2 * tonumber(ARGV[3]))
end
return 0`,
  memory(entries, keys, [perSource, total, window]) {
    const [source, sourceBefore, all, allBefore] = keys as [string, string, string, string];
    const count = (a: string, b: string) => Number(entries.get(a) ?? 0) + Number(entries.get(b) ?? 0);
    if (count(source, sourceBefore) >= Number(perSource)) return [1];
    if (count(all, allBefore) >= Number(total)) return [2];
    for (const key of [source, all])
      entries.set(key, String(Number(entries.get(key) ?? 0) + 1), 2 * Number(window));
    return [0];
  },
};

/**
 * The bound on unauthenticated sign-in starts (`GET /api/user/saml/auth`): each start stores the id of the request
 * it sends to the identity provider for `window` seconds, so that the answer can be matched to it. At most
 * `saml.startsPerSource` requests of one source address (IPv6: its /64) and `saml.startsTotal` of the whole
 * installation are waiting for an answer at any time; a start beyond answers 429 with `Retry-After`, and stores
 * nothing.
 */
export class SamlStartLimit {
  constructor(
    private readonly cache: Cache,
    private readonly config: Pick<SamlConfig, 'startsPerSource' | 'startsTotal'>,
    private readonly window: number,
  ) {}

  async take(source: string): Promise<void> {
    const now = Math.floor(Date.now() / 1000);
    const n = Math.floor(now / this.window);
    const block = sourceBlock(source);
    const keys = [
      `saml:starts:${block}:${n}`,
      `saml:starts:${block}:${n - 1}`,
      `saml:starts:all:${n}`,
      `saml:starts:all:${n - 1}`,
    ];
    const { startsPerSource, startsTotal } = this.config;
    const [over] = await this.cache.atomic(start, keys, [startsPerSource, startsTotal, this.window]);
    if (!over) return;
    // The earliest moment the count can drop: the end of the current window, when the previous one stops counting.
    const wait = Math.max(1, (n + 1) * this.window - now);
    throw new TooManyRequests(
      over === 1
        ? 'too many single sign-ons started from your address; try again later'
        : 'too many single sign-ons are waiting for the identity provider; try again later',
      { 'Retry-After': String(wait), 'Access-Control-Expose-Headers': 'Retry-After' },
    );
  }
}
