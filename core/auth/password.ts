import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { availableParallelism } from 'node:os';
import type { Config } from '../config/schema';
import { TooManyRequests } from '../errors';

/**
 * Password hashing with scrypt (RFC 7914). Parameters follow OWASP's scrypt guidance (N=2^15, r=8, p=3: 32 MiB per
 * hash); they are stored in each hash so they can be raised later and old hashes still verify.
 */
const PARAMS = { N: 2 ** 15, r: 8, p: 3 };
const KEYLEN = 32;

function derive(password: string, salt: Buffer, p: typeof PARAMS): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, KEYLEN, { ...p, maxmem: 256 * p.N * p.r * 2 }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, PARAMS);
  return `scrypt$${PARAMS.N}$${PARAMS.r}$${PARAMS.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const key = await derive(password, Buffer.from(salt, 'base64'), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

let dummy: Promise<string> | undefined;
/** Spends one hash on an unknown user so that its answer takes as long as a wrong password (no user probing). */
export async function burnPasswordCheck(password: string): Promise<false> {
  dummy ??= hashPassword('gatehouse-dummy-password');
  await verifyPassword(password, await dummy);
  return false;
}

/** Constant-time comparison of two secrets given as strings. */
export function secretsEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

interface Waiter {
  resolve(): void;
  reject(err: Error): void;
}

/**
 * The server's password hashing, bounded: at most `auth.hashConcurrency` hashes run at once (each takes a thread
 * and 32 MiB for about a quarter of a second) and at most `auth.hashQueue` wait for a slot; beyond that the call
 * answers 429 with `Retry-After` at once instead of making everyone slower. One source never holds every slot (with
 * two or more, one is always left to the others), waiting checks are served round-robin by source, and a full
 * queue sheds a waiter of the source with the most waiting: a flood from one address cannot starve the others.
 * A check marked `known` (an account signing in from where it signed in before) goes ahead of the others and takes
 * the place of an unknown one when the queue is full, so a flood from many addresses does not lock people out.
 */
export class PasswordHashing {
  readonly concurrency: number;
  readonly queueLimit: number;
  /** Most slots one source may hold at once. */
  readonly perSource: number;
  private running = 0;
  private readonly runningBy = new Map<string, number>();
  private waitingCount = 0;
  /**
   * Waiters by tier (0: known, 1: the rest), then by source; each Map's order is the round-robin order (a source
   * served goes to the back).
   */
  private readonly tiers = [new Map<string, Waiter[]>(), new Map<string, Waiter[]>()] as const;

  constructor(deps: { config: Config }) {
    const { hashConcurrency, hashQueue } = deps.config.auth;
    this.concurrency = hashConcurrency > 0 ? hashConcurrency : availableParallelism();
    this.queueLimit = hashQueue >= 0 ? hashQueue : 8 * this.concurrency;
    this.perSource = Math.max(1, this.concurrency - 1);
  }

  hash(password: string, source = 'server'): Promise<string> {
    return this.slot(source, false, () => hashPassword(password));
  }

  /** `known`: the account has signed in from this source before, so this check goes ahead of unknown ones. */
  verify(password: string, stored: string, source = 'server', known = false): Promise<boolean> {
    return this.slot(source, known, () => verifyPassword(password, stored));
  }

  /** One hash for an unknown user, so its answer costs what a wrong password does. */
  burn(password: string, source = 'server'): Promise<false> {
    return this.slot(source, false, () => burnPasswordCheck(password));
  }

  /** Hashes running and waiting now (for metrics and tests). */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waitingCount };
  }

  private async slot<T>(source: string, known: boolean, work: () => Promise<T>): Promise<T> {
    if (this.mayStart(source)) this.start(source);
    else await this.enqueue(source, known ? 0 : 1);
    try {
      return await work();
    } finally {
      this.finish(source);
    }
  }

  private mayStart(source: string): boolean {
    return this.running < this.concurrency && (this.runningBy.get(source) ?? 0) < this.perSource;
  }

  private start(source: string): void {
    this.running++;
    this.runningBy.set(source, (this.runningBy.get(source) ?? 0) + 1);
  }

  private finish(source: string): void {
    this.running--;
    const mine = (this.runningBy.get(source) ?? 1) - 1;
    if (mine > 0) this.runningBy.set(source, mine);
    else this.runningBy.delete(source);
    this.dispatch();
  }

  /** Hands free slots to waiting sources, known checks first, in turn, skipping sources that hold their share. */
  private dispatch(): void {
    for (const waiting of this.tiers) {
      for (const source of [...waiting.keys()]) {
        if (this.running >= this.concurrency) return;
        if (!this.mayStart(source)) continue;
        const q = waiting.get(source) as Waiter[];
        const waiter = q.shift() as Waiter;
        waiting.delete(source);
        if (q.length) waiting.set(source, q);
        this.waitingCount--;
        this.start(source);
        waiter.resolve();
      }
    }
  }

  private enqueue(source: string, tier: 0 | 1): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const waiting = this.tiers[tier];
      if (this.waitingCount >= this.queueLimit) {
        // A known check takes the place of an unknown one; otherwise the source with the most waiting in this
        // tier (the latest in turn among equals) gives up its newest, unless that is this source holding its share.
        const unknown = this.tiers[1];
        const from = tier === 0 && unknown.size > 0 ? unknown : waiting;
        let longest: Waiter[] | undefined;
        for (const q of from.values()) if (!longest || q.length >= longest.length) longest = q;
        const own = from === waiting ? (waiting.get(source)?.length ?? 0) : -1;
        if (!longest || longest.length <= own + 1) return reject(busy());
        (longest.pop() as Waiter).reject(busy());
        this.waitingCount--;
        for (const [s, q] of from) if (q.length === 0) from.delete(s);
      }
      const q = waiting.get(source) ?? [];
      q.push({ resolve, reject });
      waiting.set(source, q);
      this.waitingCount++;
    });
  }
}

function busy(): TooManyRequests {
  return new TooManyRequests('too many sign-ins at once; try again in a moment', {
    'Retry-After': '1',
    'Access-Control-Expose-Headers': 'Retry-After',
  });
}
