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
const COLUMNS = '(tenant_id, session_uid, seat, time, width, height, message)';
/**
 * A row's fields before its message, less the session uid's bytes: the field count, then each field's length and
 * value, then the message's length.
 */
const ROW_HEAD = 2 + (4 + 16) + 4 + (4 + 4) + (4 + 8) + (4 + 4) + (4 + 4) + 4;
/** A CopyData message's type byte ('d'). */
const COPY_DATA = 0x64;

/**
 * Writes recorded output into `table` (session_records' columns) with PostgreSQL's binary COPY, through `pg`. Each
 * message goes to the socket from the memory it is in. With INSERT, the driver built every statement in a buffer it
 * grew as parameters arrived, copying each message two to four times; those allocations brought the server a major
 * collection per 64 MB recorded, and that was most of what recording cost it (bench/RESULTS.md). COPY is one
 * statement: the rows are kept all or none.
 *
 * The tenant is written as given, like TenantModel does for an insert; the session must be one of the tenant's (the
 * callers read it through the tenant first) and must exist (the foreign key).
 */
export async function copyRecords(
  db: Knex,
  table: string,
  tenantId: string,
  uid: string,
  records: CopiedRecord[],
): Promise<void> {
  const tenant = Buffer.from(tenantId.replaceAll('-', ''), 'hex');
  const session = Buffer.from(uid);
  if (tenant.length !== 16) throw new Error('a session record needs a namespace id');
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
  const sql = `copy ${table} ${COLUMNS} from stdin (format binary)`;
  const client = (await db.client.acquireConnection()) as PgClient;
  try {
    await new Promise<void>((resolve, reject) => client.query(new CopyIn(sql, parts, resolve, reject)));
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
  stream: { cork(): void; uncork(): void; write(chunk: Buffer): boolean };
  query(text: string): void;
  endCopyFrom(): void;
}

interface PgClient {
  query(submittable: CopyIn): void;
}

/**
 * A `pg` submittable (the interface pg-cursor and pg-copy-streams implement): sends `COPY ... FROM STDIN`, and when
 * PostgreSQL asks for the data, writes the prepared CopyData messages to the socket in one corked write and ends
 * the copy. It settles on the first error (PostgreSQL's, the connection's, or pg's query timeout) or when
 * PostgreSQL is ready again; by then every byte has been written or will never be.
 */
class CopyIn {
  private settled = false;
  /** pg sets or calls this for submittables; the promise above is what callers wait on. */
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
    const stream = connection.stream;
    stream.cork();
    for (const part of this.parts) stream.write(part);
    connection.endCopyFrom();
    stream.uncork();
  }

  handleError(err: Error): void {
    this.finish(err);
  }

  handleReadyForQuery(): void {
    this.finish(null);
  }

  // The rest of what pg may call on an active query: a COPY FROM answers none of these.
  handleCommandComplete(): void {}
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handlePortalSuspended(): void {}
  handleEmptyQuery(): void {}
  handleCopyData(): void {}

  private finish(err: Error | null): void {
    if (this.settled) return;
    this.settled = true;
    this.callback?.(err);
    if (err) this.reject(err);
    else this.resolve();
  }
}
