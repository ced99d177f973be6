import { isUtf8 } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { listPage, NotFound, TenantStore, Unprocessable } from '@gatehouse/core';
import { throughPg } from '@gatehouse/core/store/db';
import type { Knex } from 'knex';
import { type Model, type QueryBuilder, raw } from 'objection';
import type { DeviceView } from '../devices/schemas';
import { deviceViews } from '../devices/service';
import type { ConsoleEvents } from '../events/service';
import { Namespace } from '../namespaces/model';
import { copyRecords } from './copy-records';
import { type SessionEvent as SessionEventModel, Session as SessionModel, SessionRecord } from './model';
import type { RecordEntry, Session, SessionEvent } from './schemas';

/**
 * One entry to keep: output (or a size change, with an empty message) of one seat at one instant. The gateway hands
 * output over as the bytes the device sent (see `storableText`).
 */
export interface NewRecord {
  seat: number;
  message: string | Buffer;
  time: Date;
  width: number;
  height: number;
}

/** A session as the gateway opens it, before sign-in. */
export interface NewSession {
  tenantId: string;
  deviceUid: string;
  username: string;
  ip: string;
  type: 'web' | 'term';
  recorded: boolean;
  /** Chosen by the caller when it must know the uid before the row is written (the gateway's journal). */
  uid?: string;
  /** The gateway instance carrying the session (LiveSessions.instance). */
  instance?: string;
}

/** Ends live sessions on this instance (the gateway fills it in); answers whether it knew the session. */
export interface LiveSessionCloser {
  /**
   * Ends the live session wherever it runs (this server or another one sharing the cache). `notice` is shown to
   * the person in the session (their SSH client or web terminal) before it ends.
   */
  close(uid: string, notice?: string): Promise<void>;
}

/**
 * The gateway vouches for its live sessions every minute (`last_seen`) and closes those of a dead server after five
 * missed heartbeats. A session not closed but not vouched for in that window is no longer live either: reading it
 * so keeps `active` and the stats right between a crash and the next sweep.
 */
export const LIVE_WINDOW_SECONDS = 300;

/** Sessions whose recordings one retention transaction removes at most. */
const RETENTION_BATCH = 200;
/** How long after a session closed its recording may be removed for retention. */
const RETENTION_CLOSED_MARGIN_MS = 5 * 60_000;

/** Session columns plus `live`, judged by the database clock that wrote `last_seen`. */
function withLive(q: QueryBuilder<SessionModel>): QueryBuilder<SessionModel> {
  return q.select(
    'sessions.*',
    raw('(sessions.closed_at is null and sessions.last_seen > now() - make_interval(secs => ?)) as live', [
      LIVE_WINDOW_SECONDS,
    ]),
  );
}

/** A deleted device is a removed one (the devices API deletes softly) or one whose row is gone. */
function shownDevice(devices: Map<string, DeviceView>, uid: string): DeviceView | null {
  const device = devices.get(uid);
  return device && device.status !== 'removed' ? device : null;
}

function present(row: SessionModel, events: SessionEventModel[], device: DeviceView | null): Session {
  const items = events.map((e) => ({
    type: e.type,
    timestamp: new Date(e.timestamp).toISOString(),
    ...(e.data === null || e.data === undefined ? {} : { data: e.data }),
    seat: e.seat,
  }));
  return {
    uid: row.uid,
    device_uid: row.device_uid,
    device,
    tenant_id: row.tenant_id,
    username: row.username,
    ip_address: row.ip_address,
    started_at: new Date(row.started_at).toISOString(),
    last_seen: new Date(row.last_seen).toISOString(),
    active: row.live === true,
    authenticated: row.authenticated,
    recorded: row.recorded,
    recording_removed_at: row.recording_removed_at ? new Date(row.recording_removed_at).toISOString() : null,
    recording_removed_reason: row.recording_removed_reason ?? null,
    recording_lost_bytes: Number(row.recording_lost_bytes ?? 0),
    recording_lost_at: row.recording_lost_at ? new Date(row.recording_lost_at).toISOString() : null,
    type: row.type,
    term: row.term,
    position: row.position,
    events: {
      types: [...new Set(items.map((i) => i.type))],
      seats: [...new Set(items.map((i) => i.seat))].sort((a, b) => a - b),
      items,
    },
  };
}

/**
 * Sessions: every gateway connection attempt is a row with its events, and with recording on,
 * the terminal output of each seat (a seat is one session channel of the connection).
 */
/**
 * What an SSH client sent (a command, a terminal type), as the audit can keep it: PostgreSQL refuses a NUL in text
 * and JSON, so a NUL shows as ␀ (U+2400), and a broken surrogate pair as U+FFFD. Without this one such string made
 * the store refuse its whole batch of events, and a client could keep its commands out of the audit.
 */
function storable(text: string): string {
  return text
    .replaceAll('\u0000', '\u2400')
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}

export class SessionService {
  private readonly db: Knex;
  private readonly events: ConsoleEvents | undefined;
  constructor(deps: { db: Knex; consoleEvents?: ConsoleEvents }) {
    this.db = deps.db;
    this.events = deps.consoleEvents;
  }

  /** The gateway has no request: it writes for the namespace it established when the connection signed in. */
  private store(tenantId: string): TenantStore {
    return new TenantStore(this.db, tenantId);
  }

  // ---- what the gateway writes -------------------------------------------------------------------------------

  async open(s: NewSession): Promise<string> {
    const uid = s.uid ?? newSessionUid();
    await this.store(s.tenantId)
      .query(SessionModel)
      .insert({
        uid,
        device_uid: s.deviceUid,
        username: s.username,
        ip_address: s.ip,
        type: s.type,
        recorded: s.recorded,
        ...(s.instance ? { instance: s.instance } : {}),
      });
    this.events?.publish(s.tenantId, { kind: 'session.started', session: uid, device: s.deviceUid });
    return uid;
  }

  update(
    tenantId: string,
    uid: string,
    changes: { authenticated?: boolean; term?: string; recorded?: boolean },
  ): Promise<void> {
    return updateSession(this.store(tenantId), uid, changes);
  }

  async addEvents(tenantId: string, uid: string, events: Omit<SessionEvent, 'timestamp'>[]): Promise<void> {
    if (!events.length) return;
    // Events belong to the session: reached through this tenant's session, they cannot be written under another's.
    const own = await this.store(tenantId).query(SessionModel).findById(uid).select('uid');
    if (!own) throw new NotFound('session');
    await own.$relatedQuery('events', undefined).insert(
      events.map((e) => ({
        type: e.type,
        data:
          e.data === undefined
            ? null
            : JSON.stringify(e.data, (_, v) => (typeof v === 'string' ? storable(v) : v)),
        seat: e.seat,
      })) as never,
    );
  }

  addRecords(tenantId: string, uid: string, records: NewRecord[]): Promise<void> {
    return addRecords(this.store(tenantId), uid, records);
  }

  /**
   * Marks live sessions as still alive (the gateway calls this periodically, for every session it carries, of any
   * namespace): one plain statement on purpose, the heartbeat is a bulk path.
   */
  async touch(uids: string[]): Promise<void> {
    if (uids.length) await this.db('sessions').whereIn('uid', uids).update({ last_seen: new Date() });
  }

  /**
   * Counts output the recording lost (the store could not take it): the trace a session keeps, shown on its page.
   * `at` is when the first of it was lost.
   */
  async markRecordingLoss(tenantId: string, uid: string, bytes: number, at: Date): Promise<void> {
    await this.store(tenantId)
      .query(SessionModel)
      .findById(uid)
      .patch({
        recording_lost_bytes: this.db.raw('recording_lost_bytes + ?', [bytes]) as unknown as number,
        recording_lost_at: this.db.raw('coalesce(recording_lost_at, ?)', [at]) as unknown as Date,
      });
  }

  async markClosed(tenantId: string, uid: string): Promise<void> {
    await markClosed(this.store(tenantId), uid);
    this.events?.publish(tenantId, { kind: 'session.closed', session: uid });
  }

  /**
   * Closes the open sessions that no running gateway carries: those of `self` when given (this instance just
   * started, so the ones on record are its predecessor's, left by a crash) and those of instances that are not
   * alive. Answers how many were closed. Spans every namespace: the sweep is per gateway instance.
   */
  async closeOrphans(self: string | null, alive: (instance: string) => Promise<boolean>): Promise<number> {
    const others = (await SessionModel.acrossTenants(this.db)
      .whereNull('closed_at')
      .whereNotNull('instance')
      .whereNot('instance', self ?? '')
      .distinct('instance')) as { instance: string }[];
    const gone = self ? [self] : [];
    for (const { instance } of others) if (!(await alive(instance))) gone.push(instance);
    if (gone.length === 0) return 0;
    return SessionModel.acrossTenants(this.db)
      .whereNull('closed_at')
      .whereIn('instance', gone)
      .patch({ closed_at: raw('now()') as never });
  }

  /**
   * Removes the recordings their namespace no longer keeps (`settings.recording_retention_days`, counted from the
   * session's start), for every namespace that sets it. Each session keeps its trace: the time and the reason of
   * the removal, which its API answer and the console show. Only sessions closed at least
   * RETENTION_CLOSED_MARGIN_MS ago lose theirs, in batches of
   * RETENTION_BATCH sessions per transaction, and rows another instance is removing at the same time are skipped
   * (every instance runs this). Answers how many sessions lost their recording.
   */
  async expireRecordings(): Promise<number> {
    const namespaces = (await this.db('namespaces')
      .whereRaw("settings->>'recording_retention_days' ~ '^[0-9]{1,4}$'")
      .whereRaw("(settings->>'recording_retention_days')::int > 0")
      .select('tenant_id', this.db.raw("(settings->>'recording_retention_days')::int as days"))) as {
      tenant_id: string;
      days: number;
    }[];
    let removed = 0;
    for (const { tenant_id: tenantId, days } of namespaces) {
      const before = new Date(Date.now() - days * 86_400_000);
      for (;;) {
        const n = await this.db.transaction(async (trx) => {
          const uids = (await trx('sessions')
            .where({ tenant_id: tenantId, recorded: true })
            .whereNull('recording_removed_at')
            // Closed a while ago: output the gateway flushed as the session ended has been stored by then.
            .where('closed_at', '<', new Date(Date.now() - RETENTION_CLOSED_MARGIN_MS))
            .where('started_at', '<', before)
            .orderBy('started_at')
            .limit(RETENTION_BATCH)
            .forUpdate()
            .skipLocked()
            .pluck('uid')) as string[];
          if (uids.length === 0) return 0;
          await trx('session_records').where({ tenant_id: tenantId }).whereIn('session_uid', uids).delete();
          await trx('sessions')
            .where({ tenant_id: tenantId })
            .whereIn('uid', uids)
            .update({ recording_removed_at: trx.fn.now(), recording_removed_reason: 'retention' });
          return uids.length;
        });
        removed += n;
        if (n < RETENTION_BATCH) break;
      }
    }
    return removed;
  }

  /** Sessions whose gateway stopped vouching for them (a crashed instance) are closed after `seconds`. */
  async closeStale(seconds: number): Promise<void> {
    await SessionModel.acrossTenants(this.db)
      .whereNull('closed_at')
      .where('last_seen', '<', new Date(Date.now() - seconds * 1000))
      .patch({ closed_at: raw('now()') as never });
  }

  /** `GET /api/stats` active_sessions: sessions of the namespace that are live now (see LIVE_WINDOW_SECONDS). */
  async countActive(tenantId: string): Promise<number> {
    return this.store(tenantId)
      .query(SessionModel)
      .whereNull('closed_at')
      .whereRaw('last_seen > now() - make_interval(secs => ?)', [LIVE_WINDOW_SECONDS])
      .resultSize();
  }

  /** The namespace of a session, for the gateway's internal calls (which carry no namespace); 404 when none. */
  async tenantOf(uid: string): Promise<string> {
    const row = await SessionModel.acrossTenants(this.db).findById(uid).select('tenant_id');
    if (!row) throw new NotFound('session');
    return row.tenant_id;
  }

  /** A session as the API shows it, for the gateway's internal calls (the namespace from `tenantOf`). */
  get(tenantId: string, uid: string): Promise<Session> {
    return readSession(this.store(tenantId), uid);
  }
}

/** What the sessions list is narrowed to; every field given must hold. */
export interface SessionListFilter {
  username?: string;
  deviceUid?: string;
  active?: boolean;
  startedAfter?: Date;
  startedBefore?: Date;
}

/**
 * The sessions of the caller's namespace (request scope): the API lists, plays, closes and records them. Every
 * read and write goes through the scope's tenant store.
 */
export class NamespaceSessions {
  private readonly tenant: TenantStore;
  private readonly live: LiveSessionCloser;

  private readonly events: ConsoleEvents | undefined;
  constructor(deps: { tenant: TenantStore; liveSessions: LiveSessionCloser; consoleEvents?: ConsoleEvents }) {
    this.events = deps.consoleEvents;
    this.tenant = deps.tenant;
    this.live = deps.liveSessions;
  }

  async list(
    page: { page: number; per_page: number },
    filter: SessionListFilter = {},
  ): Promise<{ items: Session[]; total: number }> {
    const q = withLive(this.tenant.query(SessionModel));
    if (filter.username !== undefined) q.where('sessions.username', filter.username);
    if (filter.deviceUid !== undefined) q.where('sessions.device_uid', filter.deviceUid);
    if (filter.startedAfter) q.where('sessions.started_at', '>=', filter.startedAfter);
    if (filter.startedBefore) q.where('sessions.started_at', '<', filter.startedBefore);
    // Active is read as `live` is (LIVE_WINDOW_SECONDS): not closed, and vouched for within the window.
    if (filter.active !== undefined) {
      q.whereRaw(
        `${filter.active ? '' : 'not '}(sessions.closed_at is null and sessions.last_seen > now() - make_interval(secs => ?))`,
        [LIVE_WINDOW_SECONDS],
      );
    }
    const rows = await listPage(q.withGraphFetched('events').modifyGraph('events', byId), page, {
      column: 'started_at',
      direction: 'desc',
    });
    // One look-up for the page's devices, not one per session.
    const devices = await deviceViews(
      this.tenant,
      rows.items.map((r) => r.device_uid),
    );
    return {
      items: rows.items.map((r) => present(r, r.events ?? [], shownDevice(devices, r.device_uid))),
      total: rows.total,
    };
  }

  get(uid: string): Promise<Session> {
    return readSession(this.tenant, uid);
  }

  /**
   * Ends a live session: the gateway holding it tells the person in it `notice`, then disconnects the user and the
   * device side.
   */
  async close(uid: string, notice?: string): Promise<void> {
    const row = await sessionRow(this.tenant, uid);
    await this.live.close(row.uid, notice);
    await markClosed(this.tenant, uid);
    this.events?.publish(this.tenant.tenantId, { kind: 'session.closed', session: uid });
  }

  /**
   * Terminal output a device sends for a session it carries. Another device's session is not found (its uid tells
   * the caller nothing); a closed session's recording is final.
   */
  async record(
    uid: string,
    entry: Omit<NewRecord, 'time'>,
    recording: boolean,
    deviceUid: string,
  ): Promise<void> {
    const row = await sessionRow(this.tenant, uid);
    if (row.device_uid !== deviceUid) throw new NotFound('session');
    if (row.closed_at !== null) throw new Unprocessable('the session is closed; its recording is final');
    if (!recording) throw new Unprocessable('session recording is off in this namespace');
    await addRecords(this.tenant, row.uid, [{ ...entry, time: new Date() }]);
    if (!row.recorded) await updateSession(this.tenant, uid, { recorded: true });
  }

  async records(uid: string, seat: number): Promise<RecordEntry[]> {
    await sessionRow(this.tenant, uid);
    const rows = await this.tenant.query(SessionRecord).where({ session_uid: uid, seat }).orderBy('id');
    return rows.map((r) => ({
      uid: r.session_uid,
      seat: r.seat,
      message: r.message,
      tenant_id: r.tenant_id,
      time: new Date(r.time).toISOString(),
      width: r.width,
      height: r.height,
    }));
  }

  /**
   * The namespace's `session_record` setting. The namespaces table is not this feature's, but this one call of
   * the sessions API writes to it; it changes only that key of the settings document, of the caller's own
   * namespace.
   */
  async setRecording(on: boolean): Promise<void> {
    const n = await Namespace.bindKnex(this.tenant.db)
      .query(this.tenant.trx)
      .findById(this.tenant.tenantId)
      .patch({
        settings: raw("jsonb_set(settings, '{session_record}', to_jsonb(?::boolean))", [on]) as never,
      });
    if (!n) throw new NotFound('namespace');
  }

  async deleteRecords(uid: string, seat: number): Promise<void> {
    await sessionRow(this.tenant, uid);
    await this.tenant.query(SessionRecord).where({ session_uid: uid, seat }).delete();
  }
}

// ---- shared by the gateway's writer and the namespace's calls -------------------------------------------------

const byId = (b: QueryBuilder<Model>) => b.orderBy('id');

async function sessionRow(tenant: TenantStore, uid: string): Promise<SessionModel> {
  const row = await withLive(tenant.query(SessionModel)).findById(uid);
  if (!row) throw new NotFound('session');
  return row;
}

async function readSession(tenant: TenantStore, uid: string): Promise<Session> {
  const row = await sessionRow(tenant, uid);
  const events = await row.$relatedQuery('events', tenant.trx).orderBy('id');
  const views = await deviceViews(tenant, [row.device_uid]);
  return present(row, events, shownDevice(views, row.device_uid));
}

async function updateSession(
  tenant: TenantStore,
  uid: string,
  changes: { authenticated?: boolean; term?: string; recorded?: boolean },
): Promise<void> {
  await tenant
    .query(SessionModel)
    .findById(uid)
    .patch({
      ...(changes.authenticated !== undefined ? { authenticated: changes.authenticated } : {}),
      ...(changes.term !== undefined ? { term: storable(changes.term) } : {}),
      ...(changes.recorded !== undefined ? { recorded: changes.recorded } : {}),
      last_seen: new Date(),
    });
}

async function markClosed(tenant: TenantStore, uid: string): Promise<void> {
  await tenant
    .query(SessionModel)
    .findById(uid)
    .whereNull('closed_at')
    .patch({ closed_at: new Date(), last_seen: new Date() });
}

/**
 * The most message bytes one INSERT carries on the embedded store. The statement is built whole in memory, by the
 * client and by PostgreSQL; on PostgreSQL one 13 MB statement cost both sides 1.5 to 3.6 times the CPU of the same
 * rows sent 2 MB at a time (bench/RESULTS.md, "What recording costs").
 */
const STATEMENT_BYTES = 2 * 1024 * 1024;
/** The most rows one INSERT carries: 7 parameters each, far below PostgreSQL's 65,535 per statement. */
const STATEMENT_ROWS = 1000;

/**
 * Keeps terminal output. PostgreSQL text cannot hold a NUL, which programs do print (binary files, `printf '\0'`)
 * and terminals show as nothing: it is dropped here, or the whole batch of the session would be refused.
 *
 * On PostgreSQL the rows go in one binary COPY, each message written from the memory it is in (copy-records.ts);
 * on the embedded store as INSERTs of about 2 MB, in one transaction. Either way a flush is kept whole or not at all.
 */
async function addRecords(tenant: TenantStore, uid: string, records: NewRecord[]): Promise<void> {
  if (!records.length) return;
  const rows = records.map((r) => ({
    seat: r.seat,
    message: storableText(typeof r.message === 'string' ? Buffer.from(r.message) : r.message),
    time: r.time,
    width: r.width,
    height: r.height,
  }));
  // COPY takes a connection of its own: inside a transaction the rows go with it, as INSERTs.
  if (throughPg(tenant.db) && !tenant.trx) {
    await copyRecords(tenant.db, tenant.tenantId, uid, rows);
    return;
  }
  const statements: (typeof rows)[] = [[]];
  let bytes = 0;
  for (const row of rows) {
    const size = row.message.length;
    const current = statements.at(-1) as typeof rows;
    if (current.length > 0 && (bytes + size > STATEMENT_BYTES || current.length >= STATEMENT_ROWS)) {
      statements.push([row]);
      bytes = size;
    } else {
      current.push(row);
      bytes += size;
    }
  }
  // The column is text and reads back as a string; the embedded store takes the bytes as text.
  const insert = (store: TenantStore, statement: typeof rows) =>
    store
      .query(SessionRecord)
      .insert(
        statement.map((row) => ({ ...row, session_uid: uid, message: row.message as unknown as string })),
      );
  if (statements.length === 1) {
    await insert(tenant, rows);
    return;
  }
  await tenant.transaction(async (store) => {
    for (const statement of statements) await insert(store, statement);
  });
}

/**
 * Terminal output as the store's text column takes it: valid UTF-8 without NUL (PostgreSQL refuses both). What a
 * device sends usually is already, and then goes to the store as it is, with no string made of it on the way.
 * Anything else is decoded with replacement characters, as a terminal shows it.
 */
export function storableText(bytes: Buffer): Buffer {
  let text = bytes;
  if (text.includes(0)) text = withoutNul(text);
  if (!isUtf8(text)) text = Buffer.from(text.toString('utf8'), 'utf8');
  return text;
}

/**
 * `bytes` less its zero bytes. A plain loop: a program may print megabytes of them (`cat /dev/zero`), and a native
 * search per zero byte was many times slower.
 */
function withoutNul(bytes: Buffer): Buffer {
  const out = Buffer.allocUnsafe(bytes.length);
  let length = 0;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i] as number;
    if (byte !== 0) out[length++] = byte;
  }
  return out.subarray(0, length);
}

/** A session uid: 64 hex characters. */
export function newSessionUid(): string {
  return randomBytes(32).toString('hex');
}
