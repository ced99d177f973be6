import { BlockList, isIPv4, isIPv6 } from 'node:net';
import type { AtomicStep, Cache } from '../cache';
import type { Config } from '../config/schema';

/**
 * Adds penalty time to a source, in one step (every instance shares the counters through the cache). The penalty
 * is an expiry instant: each event pushes it `add` further from max(now, expiry), capped at now + max. Once the
 * time left exceeds `min`, the source is blocked until that instant. Keys: penalty, block. Args: now, add, min,
 * max (milliseconds). Answers the time left and whether the source is now blocked.
 */
const addPenalty: AtomicStep = {
  name: 'ssh_penalty_add',
  lua: `
local now = tonumber(ARGV[1])
local add = tonumber(ARGV[2])
local min = tonumber(ARGV[3])
local max = tonumber(ARGV[4])
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
if cur < now then cur = now end
local nxt = math.min(cur + add, now + max)
local left = nxt - now
if left <= 0 then return {0, 0} end
redis.call('SET', KEYS[1], nxt, 'PX', left)
if left > min then
  redis.call('SET', KEYS[2], nxt, 'PX', left)
  return {left, 1}
end
return {left, 0}`,
  memory(entries, [penaltyKey, blockKey], [now, add, min, max]) {
    const at = Number(now);
    const cur = Math.max(Number(entries.get(penaltyKey as string) ?? 0), at);
    const next = Math.min(cur + Number(add), at + Number(max));
    const left = next - at;
    if (left <= 0) return [0, 0];
    const ttl = Math.ceil(left / 1000);
    entries.set(penaltyKey as string, String(next), ttl);
    if (left > Number(min)) {
      entries.set(blockKey as string, String(next), ttl);
      return [left, 1];
    }
    return [left, 0];
  },
};

/** Why a source was penalised (OpenSSH's PerSourcePenalties names: authfail, grace-exceeded). */
export type PenaltyEvent = 'authFail' | 'preAuthTimeout';

/**
 * Per-source penalties of the SSH gateway, modelled on OpenSSH's PerSourcePenalties: a failed password or key
 * signature, or a connection left silent until the pre-auth timeout, adds time to its source address. Below
 * `min` the source is only slowed (its failures are answered later, the more so the more it failed); above it,
 * its new connections are refused at accept until the time runs out. IPv6 sources count by their /64, as one
 * host usually holds a whole /64.
 *
 * A target (the device account a password is tried on) earns a penalty too, from whatever source the failure came:
 * beyond `targetMin` its password sign-ins are paused until the time runs out, so many sources together get no
 * more guesses at one account than a few at a time. Keys still sign in meanwhile: a key cannot be guessed.
 */
export class SshPenalties {
  private readonly exempt = new BlockList();
  private readonly settings: Config['ssh']['penalties'];

  constructor(
    private readonly cache: Cache,
    config: Config,
  ) {
    this.settings = config.ssh.penalties;
    for (const entry of this.settings.exempt) {
      const [address, bits] = entry.split('/');
      const type = isIPv6(address ?? '') ? 'ipv6' : 'ipv4';
      if (bits === undefined) this.exempt.addAddress(address ?? '', type);
      else this.exempt.addSubnet(address ?? '', Number(bits), type);
    }
  }

  /** The key a source counts under: the address, or its /64 for IPv6. */
  static source(ip: string): string {
    const plain = ip.replace(/^::ffff:/, '');
    if (!isIPv6(plain)) return plain;
    const groups = expandIPv6(plain).slice(0, 4);
    return `${groups.join(':')}::/64`;
  }

  /**
   * The block a source belongs to, for limits that a few neighbouring addresses must not get around: an IPv4
   * address's /24, an IPv6 address's /48 (a site's usual allocation). Anything else is its own block.
   */
  static block(ip: string): string {
    const plain = ip.replace(/^::ffff:/, '');
    if (isIPv4(plain)) return `${plain.split('.').slice(0, 3).join('.')}.0/24`;
    if (!isIPv6(plain)) return plain;
    return `${expandIPv6(plain).slice(0, 3).join(':')}::/48`;
  }

  private isExempt(ip: string): boolean {
    const plain = ip.replace(/^::ffff:/, '');
    try {
      return this.exempt.check(plain, isIPv6(plain) ? 'ipv6' : 'ipv4');
    } catch {
      return false;
    }
  }

  /** Seconds the source stays refused, or 0 when it may connect. */
  async blockedFor(ip: string): Promise<number> {
    if (this.isExempt(ip)) return 0;
    const until = Number((await this.cache.get(`ssh:block:${SshPenalties.source(ip)}`)) ?? 0);
    const left = until - Date.now();
    return left > 0 ? Math.ceil(left / 1000) : 0;
  }

  /**
   * Counts an event against the source. Answers how long to wait before answering the failure (the slowdown,
   * up to 3 s) and whether the source is now refused.
   */
  async penalise(ip: string, event: PenaltyEvent): Promise<{ delayMs: number; blockedFor: number }> {
    const add = this.settings[event] * 1000;
    if (add === 0 || this.isExempt(ip)) return { delayMs: 0, blockedFor: 0 };
    const source = SshPenalties.source(ip);
    const [left = 0, blocked = 0] = await this.cache.atomic(
      addPenalty,
      [`ssh:penalty:${source}`, `ssh:block:${source}`],
      [Date.now(), add, this.settings.min * 1000, this.settings.max * 1000],
    );
    return {
      delayMs: Math.min(Math.round(left / 5), 3000),
      blockedFor: blocked ? Math.ceil(left / 1000) : 0,
    };
  }

  /** Seconds password sign-ins to the target stay paused, or 0. */
  async targetBlockedFor(target: string): Promise<number> {
    const until = Number((await this.cache.get(`ssh:target-block:${target}`)) ?? 0);
    const left = until - Date.now();
    return left > 0 ? Math.ceil(left / 1000) : 0;
  }

  /**
   * Counts a failed password or key signature from `ip` against the target it was aimed at. Answers the seconds
   * the target's password sign-ins are now paused (0 while it stays below `targetMin`). An exempt source adds
   * nothing.
   */
  async penaliseTarget(ip: string, target: string): Promise<number> {
    const add = this.settings.targetAuthFail * 1000;
    if (add === 0 || this.isExempt(ip)) return 0;
    const [left = 0, blocked = 0] = await this.cache.atomic(
      addPenalty,
      [`ssh:target-penalty:${target}`, `ssh:target-block:${target}`],
      [Date.now(), add, this.settings.targetMin * 1000, this.settings.max * 1000],
    );
    return blocked ? Math.ceil(left / 1000) : 0;
  }
}

function expandIPv6(ip: string): string[] {
  const [head = '', tail] = ip.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : Array(8 - left.length - right.length).fill('0');
  return [...left, ...fill, ...right].map((g) => g.toLowerCase().replace(/^0+(?=.)/, ''));
}
