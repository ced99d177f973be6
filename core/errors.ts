/**
 * The error taxonomy. Services throw these; one Koa middleware maps them to a status and the one error body
 * (see docs/content/developers/architecture.md). Services never set HTTP status themselves, and no driver message reaches a client.
 */
export type FieldList = string[];

/** Marks taxonomy errors across copies of this module (see `HttpError[Symbol.hasInstance]`). */
const HTTP_ERROR = Symbol.for('gatehouse.HttpError');

export class HttpError extends Error {
  /**
   * Under mocha, tsx can load core twice (CommonJS for the test files, ESM for plugins imported at boot), giving two
   * `HttpError` classes; a plugin's error would then miss `instanceof` in the error middleware and lose its status
   * body. A registered symbol brand makes `instanceof HttpError` hold across both copies; subclasses keep the
   * ordinary prototype check.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: the class being asked about decides which check applies
    if (Function.prototype[Symbol.hasInstance].call(this, value)) return true;
    return (
      // biome-ignore lint/complexity/noThisInStatic: only HttpError itself accepts the brand, not its subclasses
      this === HttpError &&
      typeof value === 'object' &&
      value !== null &&
      (value as { [HTTP_ERROR]?: unknown })[HTTP_ERROR] === true
    );
  }
  readonly [HTTP_ERROR] = true;
  readonly status: number;
  /** Field names for 400 invalid-field and 409 conflict answers; the body is then a JSON array of them. */
  readonly fields: FieldList | undefined;
  /** Extra response headers (lockout, MFA token, expiry). */
  readonly headers: Record<string, string>;
  /** A machine-readable code, used by billing answers. */
  readonly code: string | undefined;

  constructor(
    status: number,
    message: string,
    opts: { fields?: FieldList; headers?: Record<string, string>; code?: string } = {},
  ) {
    super(message);
    this.status = status;
    this.fields = opts.fields;
    this.headers = opts.headers ?? {};
    this.code = opts.code;
  }
}

export class BadRequest extends HttpError {
  constructor(message = 'bad request', fields?: FieldList) {
    super(400, message, fields ? { fields } : {});
  }
}

/** 400 naming the invalid fields. */
export class Invalid extends BadRequest {
  constructor(fields: FieldList, message = 'invalid fields') {
    super(message, fields);
  }
}

export class Unauthorized extends HttpError {
  constructor(message = 'missing or malformed jwt or API token', headers?: Record<string, string>) {
    super(401, message, headers ? { headers } : {});
  }
}

export class PaymentRequired extends HttpError {
  constructor(message = 'payment required', code?: string) {
    super(402, message, code ? { code } : {});
  }
}

export class Forbidden extends HttpError {
  constructor(message = 'forbidden') {
    super(403, message);
  }
}

export class NotFound extends HttpError {
  constructor(what = 'resource') {
    super(404, `${what} not found`);
  }
}

export class NotAcceptable extends HttpError {
  constructor(message = 'not acceptable') {
    super(406, message);
  }
}

export class Conflict extends HttpError {
  constructor(fields: FieldList, message = 'conflict') {
    super(409, message, { fields });
  }
}

export class PayloadTooLarge extends HttpError {
  constructor(message = 'request body too large') {
    super(413, message);
  }
}

export class Unprocessable extends HttpError {
  constructor(message = 'unprocessable entity') {
    super(422, message);
  }
}

export class FailedDependency extends HttpError {
  constructor(message = 'failed dependency', code?: string) {
    super(424, message, code ? { code } : {});
  }
}

export class TooManyRequests extends HttpError {
  constructor(message = 'too many requests', headers?: Record<string, string>) {
    super(429, message, headers ? { headers } : {});
  }
}

export class NotImplemented extends HttpError {
  constructor(message = 'not implemented') {
    super(501, message);
  }
}

export class ServiceUnavailable extends HttpError {
  constructor(message = 'service unavailable') {
    super(503, message);
  }
}

/** Translates PostgreSQL constraint violations into taxonomy errors; anything else is returned unchanged. */
export function fromDatabaseError(err: unknown, columnsByConstraint: Record<string, string[]> = {}): unknown {
  if (typeof err !== 'object' || err === null) return err;
  // Objection wraps the driver's error (db-errors); the codes PostgreSQL gave are on the one it wraps.
  const native = (err as { nativeError?: unknown }).nativeError;
  if (typeof native === 'object' && native !== null) {
    const mapped = fromDatabaseError(native, columnsByConstraint);
    return mapped === native ? err : mapped;
  }
  const e = err as { code?: string; constraint?: string; detail?: string; column?: string };
  if (e.code === '23505') {
    const fields = (e.constraint ? columnsByConstraint[e.constraint] : undefined) ??
      columnsFromDetail(e.detail) ?? ['unknown'];
    return new Conflict(fields);
  }
  if (e.code === '23503') return new NotFound();
  // A value the database refused (wrong type, NOT NULL, CHECK, too long, bad encoding): 400 naming its column
  // where PostgreSQL says which.
  if (
    ['22P02', '23502', '23514', '22001', '22021', '22003', '22007', '22008', '22P05'].includes(e.code ?? '')
  )
    return new Invalid(e.column ? [e.column] : ['body'], 'invalid value');
  return err;
}

function columnsFromDetail(detail: string | undefined): string[] | undefined {
  // PostgreSQL: Key (lower(username))=(bob) already exists.
  const m = detail?.match(/^Key \((.+?)\)=/);
  if (!m?.[1]) return undefined;
  return m[1]
    .split(',')
    .map((c) => c.trim().replace(/^lower\((.+)\)$/, '$1'))
    .filter(Boolean);
}
