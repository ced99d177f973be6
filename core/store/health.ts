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
  // pg's connect timeout (database.connectTimeout): a server that accepts the connection and never answers it, as
  // a PostgreSQL stopped with SIGSTOP does.
  /^timeout expired$/i,
  /is not queryable/i,
  /not currently accepting connections/i,
  /Timeout acquiring a connection/i,
  /Connection is closed/i,
  /the database system is (starting up|shutting down|in recovery mode)/i,
];

/**
 * What an error says about the store (PostgreSQL) and the cache (Redis): `store` when only their drivers raise it
 * (SQLSTATE connection classes, pg and knex timeouts, a closed Redis connection), `network` for a bare network
 * error, which a mail server or an outside call raises as well, and undefined for anything else.
 */
function storeErrorKind(err: unknown): 'store' | 'network' | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  if (err instanceof AggregateError) {
    const kinds = err.errors.map(storeErrorKind);
    return kinds.includes('store') ? 'store' : kinds.includes('network') ? 'network' : undefined;
  }
  const e = err as { code?: unknown; name?: unknown; message?: unknown; nativeError?: unknown };
  // A model query's error wraps the driver's (objection's db-errors): judge the one it wraps.
  if (e.nativeError) return storeErrorKind(e.nativeError);
  const code = typeof e.code === 'string' ? e.code : '';
  if (code.startsWith('08') && code.length === 5) return 'store';
  if (UNAVAILABLE_SQLSTATES.has(code)) return 'store';
  if (e.name === 'KnexTimeoutError' || e.name === 'MaxRetriesPerRequestError') return 'store';
  const message = typeof e.message === 'string' ? e.message : '';
  if (UNAVAILABLE_MESSAGES.some((re) => re.test(message))) return 'store';
  return UNAVAILABLE_NET_CODES.has(code) ? 'network' : undefined;
}

/**
 * Whether an error means the store or the cache cannot be reached or did not answer in time, as opposed to a query
 * it refused: such an error is a 503 for the client, never a 401 or a 500. A bare network error counts only when
 * the store does not answer a check now (so an unreachable mail server is not taken for a database outage).
 */
export async function isStoreUnavailable(err: unknown, health: StoreHealth | undefined): Promise<boolean> {
  const kind = storeErrorKind(err);
  if (kind === 'store') {
    health?.markDown(err instanceof Error ? err.message : String(err));
    return true;
  }
  if (kind === 'network' && health) return !(await health.check());
  return false;
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

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Marks the store down (a store-away error was seen); a probe marks it up again at the first answer. */
  markDown(reason: string): void {
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
