import type { Knex } from 'knex';
import { ServiceUnavailable } from '../errors';
import type { Logger } from '../log';

/** What a client is told while the store is away. */
export const STORE_DOWN_MESSAGE = 'the database is unavailable; try again in a moment';

/** SQLSTATE classes and codes that mean "cannot reach or use the server now", not "your query is wrong". */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '3D000']);
const UNAVAILABLE_NET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);
const UNAVAILABLE_MESSAGES = [
  /Connection terminated/i,
  /Query read timeout/i,
  /timeout exceeded when trying to connect/i,
  /is not queryable/i,
  /not currently accepting connections/i,
  /Timeout acquiring a connection/i,
  /Connection is closed/i,
  /the database system is (starting up|shutting down|in recovery mode)/i,
];

/**
 * Whether an error means the store (PostgreSQL) or the cache (Redis) cannot be reached or did not answer in time,
 * as opposed to a query it refused. Such an error is a 503 for the client, never a 401 or a 500.
 */
export function isStoreUnavailable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  if (err instanceof AggregateError && err.errors.some(isStoreUnavailable)) return true;
  const e = err as { code?: unknown; name?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  if (code.startsWith('08') && code.length === 5) return true;
  if (UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_NET_CODES.has(code)) return true;
  if (e.name === 'KnexTimeoutError' || e.name === 'MaxRetriesPerRequestError') return true;
  const message = typeof e.message === 'string' ? e.message : '';
  return UNAVAILABLE_MESSAGES.some((re) => re.test(message));
}

/** 503 with the store-away message and a hint when to come back. */
export function storeDown(): ServiceUnavailable {
  const err = new ServiceUnavailable(STORE_DOWN_MESSAGE);
  err.headers['Retry-After'] = '5';
  return err;
}

/**
 * Whether the store answers, kept up to date cheaply. A failure that means the store is away (seen by a request, or
 * a readiness check that gets no answer within `timeoutMs`) marks it down: from then on calls that need it answer
 * 503 at once instead of each waiting for its own timeout, while a probe asks again every second and marks it up at
 * the first answer. Only one probe query is ever outstanding, so a frozen server does not fill the pool with them.
 */
export class StoreHealth {
  private downSince: number | undefined;
  private outstanding: Promise<boolean> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Knex,
    private readonly log: Logger,
    private readonly timeoutMs = 2_000,
  ) {}

  get isDown(): boolean {
    return this.downSince !== undefined;
  }

  /** Asks the store `select 1`; false when it fails or does not answer within the timeout (then it is down). */
  async check(): Promise<boolean> {
    this.outstanding ??= this.db.raw('select 1').then(
      () => true,
      (err: unknown) => {
        this.log.warn({ err }, 'store check failed');
        return false;
      },
    );
    const query = this.outstanding;
    void query.finally(() => {
      if (this.outstanding === query) this.outstanding = undefined;
    });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), this.timeoutMs);
    });
    const ok = await Promise.race([query, late]);
    clearTimeout(timer);
    if (ok) this.markUp();
    else this.markDown('no answer to a check');
    return ok;
  }

  /** Tells the health about an error a request met; store-away errors mark the store down. */
  report(err: unknown): void {
    if (isStoreUnavailable(err)) this.markDown((err as Error).message);
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private markDown(reason: string): void {
    if (this.downSince !== undefined) return;
    this.downSince = Date.now();
    this.log.error({ reason }, 'store unavailable: answering 503 until it is back');
    this.timer = setInterval(() => {
      if (!this.outstanding) void this.check();
    }, 1_000);
    this.timer.unref();
  }

  private markUp(): void {
    if (this.downSince === undefined) return;
    this.log.info({ downMs: Date.now() - this.downSince }, 'store available again');
    this.downSince = undefined;
    this.stop();
  }
}
