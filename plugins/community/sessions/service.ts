import { randomBytes } from 'node:crypto';
import { NotFound, TenantStore, Unprocessable } from '@gatehouse/core';
import type { Knex } from 'knex';
import type { DeviceService, DeviceView } from '../devices/service';

interface SessionRow {
  uid: string;
  tenant_id: string;
  device_uid: string;
  username: string;
  ip_address: string;
  started_at: Date;
  last_seen: Date;
  closed_at: Date | null;
  authenticated: boolean;
  recorded: boolean;
  type: 'web' | 'term';
  term: string;
  position: { latitude: number; longitude: number };
  /** Computed by the store's clock: see LIVE_WINDOW_SECONDS. */
  live: boolean;
}

interface EventRow {
  session_uid: string;
  type: string;
  timestamp: Date;
  data: unknown;
  seat: number;
}

interface RecordRow {
  session_uid: string;
  tenant_id: string;
  seat: number;
  message: string;
  time: Date;
  width: number;
  height: number;
}

export interface SessionEvent {
  type: string;
  timestamp: string;
  data?: unknown;
  seat: number;
}

export interface Session {
  uid: string;
  device_uid: string;
  /** The device as the devices API shows it; null once it is deleted (removed, or its row gone). */
  device: DeviceView | null;
  tenant_id: string;
  username: string;
  ip_address: string;
  started_at: string;
  last_seen: string;
  active: boolean;
  authenticated: boolean;
  recorded: boolean;
  type: 'web' | 'term';
  term: string;
  position: { latitude: number; longitude: number };
  events: { types: string[]; seats: number[]; items: SessionEvent[] };
}

export interface RecordEntry {
  uid: string;
  seat: number;
  message: string;
  tenant_id: string;
  time: string;
  width: number;
  height: number;
}

/** One entry to keep: output (or a size change, with an empty message) of one seat at one instant. */
export interface NewRecord {
  seat: number;
  message: string;
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
  /** Ends the live session wherever it runs (this server or another one sharing the cache). */
  close(uid: string): Promise<void>;
}

/**
 * The gateway vouches for its live sessions every minute (`last_seen`) and closes those of a dead server after five
 * missed heartbeats. A session not closed but not vouched for in that window is no longer live either: reading it
 * so keeps `active` and the stats right between a crash and the next sweep.
 */
export const LIVE_WINDOW_SECONDS = 300;

/** Session columns plus `live`, judged by the database clock that wrote `last_seen`. */
function withLive(db: Knex, qb: Knex.QueryBuilder): Knex.QueryBuilder {
  return qb.select(
    'sessions.*',
    db.raw('(sessions.closed_at is null and sessions.last_seen > now() - make_interval(secs => ?)) as live', [
      LIVE_WINDOW_SECONDS,
    ]),
  );
}

/** A deleted device is a removed one (the devices API deletes softly) or one whose row is gone. */
function shownDevice(devices: Map<string, DeviceView>, uid: string): DeviceView | null {
  const device = devices.get(uid);
  return device && device.status !== 'removed' ? device : null;
}

function present(row: SessionRow, events: EventRow[], device: DeviceView | null): Session {
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
 * Sessions: every gateway connection attempt is a row with its events (SPEC.md section 3), and with recording on,
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
  private readonly live: LiveSessionCloser;
  private readonly devices: DeviceService;

  constructor(deps: { db: Knex; liveSessions: LiveSessionCloser; devices: DeviceService }) {
    this.db = deps.db;
    this.live = deps.liveSessions;
    this.devices = deps.devices;
  }

  private store(tenantId: string): TenantStore {
    return new TenantStore(this.db, tenantId);
  }

  // ---- what the gateway writes -------------------------------------------------------------------------------

  async open(s: NewSession): Promise<string> {
    const uid = s.uid ?? newSessionUid();
    await this.store(s.tenantId).insert('sessions', {
      uid,
      device_uid: s.deviceUid,
      username: s.username,
      ip_address: s.ip,
      type: s.type,
      recorded: s.recorded,
      ...(s.instance ? { instance: s.instance } : {}),
    });
    return uid;
  }

  async update(
    tenantId: string,
    uid: string,
    changes: { authenticated?: boolean; term?: string; recorded?: boolean },
  ): Promise<void> {
    await this.store(tenantId)
      .table('sessions')
      .where({ uid })
      .update({
        ...(changes.authenticated !== undefined ? { authenticated: changes.authenticated } : {}),
        ...(changes.term !== undefined ? { term: storable(changes.term) } : {}),
        ...(changes.recorded !== undefined ? { recorded: changes.recorded } : {}),
        last_seen: new Date(),
      });
  }

  async addEvents(tenantId: string, uid: string, events: Omit<SessionEvent, 'timestamp'>[]): Promise<void> {
    if (!events.length) return;
    // Events belong to the session: check it is this tenant's before writing under it.
    const own = await this.store(tenantId).table('sessions').where({ uid }).first('uid');
    if (!own) throw new NotFound('session');
    await this.db('session_events').insert(
      events.map((e) => ({
        session_uid: uid,
        type: e.type,
        data:
          e.data === undefined
            ? null
            : JSON.stringify(e.data, (_, v) => (typeof v === 'string' ? storable(v) : v)),
        seat: e.seat,
      })),
    );
  }

  /**
   * Keeps terminal output. PostgreSQL text cannot hold a NUL, which programs do print (binary files, `printf '\0'`)
   * and terminals show as nothing: it is dropped here, or the whole batch of the session would be refused.
   */
  async addRecords(tenantId: string, uid: string, records: NewRecord[]): Promise<void> {
    if (!records.length) return;
    await this.store(tenantId).insert(
      'session_records',
      records.map((r) => ({
        session_uid: uid,
        seat: r.seat,
        message: r.message.replaceAll('\u0000', ''),
        time: r.time,
        width: r.width,
        height: r.height,
      })),
    );
  }

  /** Marks live sessions as still alive (the gateway calls this periodically). */
  async touch(uids: string[]): Promise<void> {
    if (uids.length) await this.db('sessions').whereIn('uid', uids).update({ last_seen: new Date() });
  }

  async markClosed(tenantId: string, uid: string): Promise<void> {
    await this.store(tenantId)
      .table('sessions')
      .where({ uid })
      .whereNull('closed_at')
      .update({ closed_at: new Date(), last_seen: new Date() });
  }

  /**
   * Closes the open sessions that no running gateway carries: those of `self` when given (this instance just
   * started, so the ones on record are its predecessor's, left by a crash) and those of instances that are not
   * alive. Answers how many were closed.
   */
  async closeOrphans(self: string | null, alive: (instance: string) => Promise<boolean>): Promise<number> {
    const others = (await this.db('sessions')
      .whereNull('closed_at')
      .whereNotNull('instance')
      .whereNot('instance', self ?? '')
      .distinct('instance')) as { instance: string }[];
    const gone = self ? [self] : [];
    for (const { instance } of others) if (!(await alive(instance))) gone.push(instance);
    if (gone.length === 0) return 0;
    return this.db('sessions')
      .whereNull('closed_at')
      .whereIn('instance', gone)
      .update({ closed_at: this.db.fn.now() });
  }

  /** Sessions whose gateway stopped vouching for them (a crashed instance) are closed after `seconds`. */
  async closeStale(seconds: number): Promise<void> {
    await this.db('sessions')
      .whereNull('closed_at')
      .where('last_seen', '<', new Date(Date.now() - seconds * 1000))
      .update({ closed_at: this.db.fn.now() });
  }

  // ---- what the API reads -----------------------------------------------------------------------------------

  async list(
    tenantId: string,
    page: { page: number; per_page: number },
  ): Promise<{ items: Session[]; total: number }> {
    const q = this.store(tenantId).table<SessionRow>('sessions');
    const [{ count } = { count: 0 }] = (await q.clone().count({ count: '*' })) as { count: number }[];
    const rows = (await withLive(this.db, q)
      .orderBy('started_at', 'desc')
      .limit(page.per_page)
      .offset((page.page - 1) * page.per_page)) as SessionRow[];
    const events = rows.length
      ? ((await this.db<EventRow>('session_events')
          .whereIn(
            'session_uid',
            rows.map((r) => r.uid),
          )
          .orderBy('id')) as EventRow[])
      : [];
    // One look-up for the page's devices, not one per session.
    const devices = await this.devices.views(
      tenantId,
      rows.map((r) => r.device_uid),
    );
    return {
      items: rows.map((r) =>
        present(
          r,
          events.filter((e) => e.session_uid === r.uid),
          shownDevice(devices, r.device_uid),
        ),
      ),
      total: Number(count),
    };
  }

  /** `GET /api/stats` active_sessions: sessions of the namespace that are live now (see LIVE_WINDOW_SECONDS). */
  async countActive(tenantId: string): Promise<number> {
    const [row] = (await this.store(tenantId)
      .table('sessions')
      .whereNull('closed_at')
      .whereRaw('last_seen > now() - make_interval(secs => ?)', [LIVE_WINDOW_SECONDS])
      .count({ count: '*' })) as { count: string | number }[];
    return Number(row?.count ?? 0);
  }

  private async row(tenantId: string, uid: string): Promise<SessionRow> {
    const row = (await withLive(this.db, this.store(tenantId).table<SessionRow>('sessions'))
      .where('sessions.uid', uid)
      .first()) as SessionRow | undefined;
    if (!row) throw new NotFound('session');
    return row;
  }

  /** The namespace of a session, for the gateway's internal calls (which carry no namespace); 404 when none. */
  async tenantOf(uid: string): Promise<string> {
    const row = (await this.db('sessions').where({ uid }).first('tenant_id')) as
      | { tenant_id: string }
      | undefined;
    if (!row) throw new NotFound('session');
    return row.tenant_id;
  }

  async get(tenantId: string, uid: string): Promise<Session> {
    const row = await this.row(tenantId, uid);
    const events = (await this.db<EventRow>('session_events')
      .where({ session_uid: uid })
      .orderBy('id')) as EventRow[];
    const devices = await this.devices.views(tenantId, [row.device_uid]);
    return present(row, events, shownDevice(devices, row.device_uid));
  }

  /** Ends a live session: the gateway holding it disconnects the user and the device side. */
  async close(tenantId: string, uid: string): Promise<void> {
    const row = await this.row(tenantId, uid);
    await this.live.close(row.uid);
    await this.markClosed(tenantId, uid);
  }

  /**
   * Terminal output a device sends for a session it carries. Another device's session is not found (its uid tells
   * the caller nothing); a closed session's recording is final.
   */
  async record(
    tenantId: string,
    uid: string,
    entry: Omit<NewRecord, 'time'>,
    recording: boolean,
    deviceUid: string,
  ): Promise<void> {
    const row = await this.row(tenantId, uid);
    if (row.device_uid !== deviceUid) throw new NotFound('session');
    if (row.closed_at !== null) throw new Unprocessable('the session is closed; its recording is final');
    if (!recording) throw new Unprocessable('session recording is off in this namespace');
    await this.addRecords(tenantId, row.uid, [{ ...entry, time: new Date() }]);
    if (!row.recorded) await this.update(tenantId, uid, { recorded: true });
  }

  async records(tenantId: string, uid: string, seat: number): Promise<RecordEntry[]> {
    await this.row(tenantId, uid);
    const rows = (await this.store(tenantId)
      .table<RecordRow>('session_records')
      .where({ session_uid: uid, seat })
      .orderBy('id')) as RecordRow[];
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
   * SPEC.md's sessions list writes to it; it changes only that key of the settings document.
   */
  async setRecording(tenantId: string, on: boolean): Promise<void> {
    const n = await this.db('namespaces')
      .where({ tenant_id: tenantId })
      .update({
        settings: this.db.raw("jsonb_set(settings, '{session_record}', to_jsonb(?::boolean))", [on]),
      });
    if (!n) throw new NotFound('namespace');
  }

  async deleteRecords(tenantId: string, uid: string, seat: number): Promise<void> {
    await this.row(tenantId, uid);
    await this.store(tenantId).table('session_records').where({ session_uid: uid, seat }).delete();
  }
}

/** A session uid: 64 hex characters. */
export function newSessionUid(): string {
  return randomBytes(32).toString('hex');
}
