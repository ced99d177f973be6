import type { Knex } from 'knex';

/** One row of recorded output as COPY writes it; the message is valid UTF-8 without NUL (storableText). */
export interface CopiedRecord {
  seat: number;
  time: Date;
  width: number;
  height: number;
  message: Buffer;
}

/** PostgreSQL's binary COPY header (signature, flags, header extension length) and trailer (a field count of -1). */
const COPY_HEADER = Buffer.concat([Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.alloc(8)]);
const COPY_TRAILER = Buffer.from([0xff, 0xff]);
/** PostgreSQL counts timestamps in microseconds from 2000-01-01 UTC. */
const PG_EPOCH_MS = Date.UTC(2000, 0, 1);
const COPY_SQL =
  'copy session_records (tenant_id, session_uid, seat, time, width, height, message) from stdin (format binary)';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/**
 * A row's fields before its message, less the session uid's bytes: the field count, then each field's length and
 * value, then the message's length.
 */
const ROW_HEAD = 2 + (4 + 16) + 4 + (4 + 4) + (4 + 8) + (4 + 4) + (4 + 4) + 4;
/** A CopyData message's type byte ('d'). */
const COPY_DATA = 0x64;

/**
 * Run once on each connection before its first COPY. A COPY of a flush keeps every row's message in the backend's
 * memory until the statement ends, so its heap grows by the flush's size (up to about 4 MiB) and, with glibc's
 * malloc, goes back to the kernel at the end of each statement: the next COPY faults in fresh pages for every byte
 * again. That was five sixths of PostgreSQL's CPU for recorded output, 0.31 s per 64 MB against 0.05 s once the heap
 * is kept (bench/sessions/record-store.ts, bench/RESULTS.md). glibc keeps up to twice the largest block it has had
 * to map and unmap on its own; this query makes the backend allocate and free one 8 MiB value, so from then on it
 * keeps up to 16 MiB of freed heap. Elsewhere it is merely a cheap query.
 */
const READY_SQL = `select length(repeat('x', ${8 * 1024 * 1024})) as ready`;
/** The pool's connections that have run READY_SQL. */
const readied = new WeakSet<PgClient>();

/**
 * Writes recorded output into `session_records` with PostgreSQL's binary COPY, through `pg`. Each
 * message goes to the socket from the memory it is in. With INSERT, the driver built every statement in a buffer it
 * grew as parameters arrived, copying each message two to four times; those allocations brought the server a major
 * collection per 64 MB recorded, and that was most of what recording cost it (bench/RESULTS.md). COPY is one
 * statement: the rows are kept all or none.
 *
 * The namespace id is written as given, as TenantModel does for an insert. The session is the caller's own: the
 * gateway opened it under this namespace, and the API reads it through the namespace first; it must exist (the
 * foreign key).
 */
export async function copyRecords(
  db: Knex,
  tenantId: string,
  uid: string,
  records: CopiedRecord[],
): Promise<void> {
  if (!UUID.test(tenantId)) throw new Error('a session record needs a namespace id');
  const tenant = Buffer.from(tenantId.replaceAll('-', ''), 'hex');
  const session = Buffer.from(uid);
  const rowHead = ROW_HEAD + session.length;
  const parts: Buffer[] = [dataHead(COPY_HEADER.length), COPY_HEADER];
  for (const r of records) {
    // Checked here, not by Buffer's writers half-way through a row: a number the column cannot hold fails the flush.
    for (const n of [r.seat, r.width, r.height]) {
      if (!Number.isInteger(n) || n < -(2 ** 31) || n >= 2 ** 31)
        throw new RangeError(`${n} is not a 32-bit integer`);
    }
    const head = Buffer.allocUnsafe(5 + rowHead);
    head[0] = COPY_DATA;
    let at = head.writeInt32BE(4 + rowHead + r.message.length, 1);
    at = head.writeInt16BE(7, at);
    at = head.writeInt32BE(16, at);
    at += tenant.copy(head, at);
    at = head.writeInt32BE(session.length, at);
    at += session.copy(head, at);
    at = head.writeInt32BE(4, at);
    at = head.writeInt32BE(r.seat, at);
    at = head.writeInt32BE(8, at);
    at = head.writeBigInt64BE(BigInt(r.time.getTime() - PG_EPOCH_MS) * 1000n, at);
    at = head.writeInt32BE(4, at);
    at = head.writeInt32BE(r.width, at);
    at = head.writeInt32BE(4, at);
    at = head.writeInt32BE(r.height, at);
    head.writeInt32BE(r.message.length, at);
    parts.push(head, r.message);
  }
  parts.push(dataHead(COPY_TRAILER.length), COPY_TRAILER);
  const client = (await db.client.acquireConnection()) as PgClient;
  try {
    if (!readied.has(client)) {
      await client.query(READY_SQL);
      readied.add(client);
    }
    await new Promise<void>((resolve, reject) => client.query(new CopyIn(COPY_SQL, parts, resolve, reject)));
  } finally {
    await db.client.releaseConnection(client);
  }
}

/** The header of a CopyData message carrying `bytes`: its type and its length (which counts itself). */
function dataHead(bytes: number): Buffer {
  const head = Buffer.allocUnsafe(5);
  head[0] = COPY_DATA;
  head.writeInt32BE(bytes + 4, 1);
  return head;
}

/** What CopyIn uses of pg's connection (pg 8 lib/connection.js). */
interface PgConnection {
  stream: {
    cork(): void;
    uncork(): void;
    write(chunk: Buffer, done?: () => void): boolean;
    destroy(err?: Error): void;
  };
  query(text: string): void;
  endCopyFrom(): void;
  sendCopyFail(message: string): void;
}

interface PgClient {
  query(submittable: CopyIn): void;
  query(text: string): Promise<unknown>;
}

/**
 * A `pg` submittable (the interface pg-cursor and pg-copy-streams implement): sends `COPY ... FROM STDIN`, and when
 * PostgreSQL asks for the data, writes the prepared CopyData messages to the socket in one corked write and ends
 * the copy.
 *
 * The messages are views of slabs that other sessions reuse once this settles, so it settles only when the socket
 * is done with them: after the last write's callback, which runs once the bytes are with the kernel or the socket
 * is destroyed. On an error from PostgreSQL the connection stays in step (the server drops the rest of the data
 * and answers ReadyForQuery). On any other error (pg's query timeout, a lost connection) the data may still be
 * queued, so the socket is destroyed: nothing more of it goes out, PostgreSQL rolls the copy back, and knex drops
 * the connection. If the error came before PostgreSQL asked for the data, it gets CopyFail instead of the data.
 * A write that times out after the last byte went out may still be kept, as with any statement.
 */
class CopyIn {
  private failure: Error | undefined;
  private answered = false;
  private settled = false;
  private stream: PgConnection['stream'] | undefined;
  /** Resolves once the socket no longer holds any of the data (written out, or dropped with the socket). */
  private released: Promise<void> = Promise.resolve();
  /**
   * Set by pg on every query it is given: with a query timeout it wraps this to clear the timer. It must be called
   * when the copy ends, or the timer fires later and the socket of a connection back in the pool is destroyed.
   */
  callback?: (err: Error | null) => void;

  constructor(
    private readonly sql: string,
    private readonly parts: Buffer[],
    private readonly resolve: () => void,
    private readonly reject: (err: Error) => void,
  ) {}

  submit(connection: PgConnection): void {
    connection.query(this.sql);
  }

  handleCopyInResponse(connection: PgConnection): void {
    if (this.failure) {
      // Given up on already (pg's timeout while the COPY waited for a lock): the slabs may hold other output now.
      connection.sendCopyFail('the write was abandoned');
      return;
    }
    const stream = connection.stream;
    this.stream = stream;
    this.released = new Promise((done) => {
      stream.cork();
      const last = this.parts.length - 1;
      this.parts.forEach((part, i) => {
        if (i === last) stream.write(part, () => done());
        else stream.write(part);
      });
      connection.endCopyFrom();
      stream.uncork();
    });
  }

  handleError(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    const fromServer = typeof (err as { severity?: unknown }).severity === 'string';
    if (this.stream && !fromServer) this.stream.destroy(err);
    this.finish();
  }

  handleReadyForQuery(): void {
    this.answered = true;
    this.finish();
  }

  // The rest of what pg may call on an active query: a COPY FROM answers none of these.
  handleCommandComplete(): void {}
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handlePortalSuspended(): void {}
  handleEmptyQuery(): void {}
  handleCopyData(): void {}

  private finish(): void {
    if (this.settled || (!this.failure && !this.answered)) return;
    this.settled = true;
    const failure = this.failure;
    this.released.then(() => {
      this.callback?.(failure ?? null);
      if (failure) this.reject(failure);
      else this.resolve();
    });
  }
}
