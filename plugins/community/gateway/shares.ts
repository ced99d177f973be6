import { createHash, randomBytes } from 'node:crypto';
import {
  type Cache,
  type Caller,
  Forbidden,
  type Logger,
  NotFound,
  printable,
  TenantStore,
  TooManyRequests,
  Unprocessable,
} from '@gatehouse/core';
import type { Knex } from 'knex';
import type { NamespaceSettings } from '../namespaces/model';
import { Session, SessionShare } from '../sessions/model';

/** How long a link may live: from five minutes to a day; an hour unless asked. */
export const MIN_SHARE_SECONDS = 5 * 60;
export const MAX_SHARE_SECONDS = 24 * 60 * 60;
export const DEFAULT_SHARE_SECONDS = 60 * 60;
/** Links of one session that may be usable at once (not expired, not revoked). */
export const MAX_SHARES_PER_SESSION = 20;
/** A link's token: 32 random bytes, base64url. Anything else is no token, and is not looked up. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;
/** Where a revocation is announced to every server, for the streams they hold on that link. */
const REVOKE_CHANNEL = 'sessions:share-revoked';

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

/** A link as the API lists it: never its token, which is given once. */
export interface ShareView {
  id: string;
  session_uid: string;
  created_by: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
  uses: number;
  last_used_at: string | null;
  /** Usable now: not revoked, not expired. */
  active: boolean;
}

function view(share: SessionShare, now: Date): ShareView {
  const expires = new Date(share.expires_at);
  return {
    id: share.id,
    session_uid: share.session_uid,
    created_by: share.created_by_name,
    created_at: new Date(share.created_at).toISOString(),
    expires_at: expires.toISOString(),
    revoked_at: share.revoked_at ? new Date(share.revoked_at).toISOString() : null,
    uses: share.uses,
    last_used_at: share.last_used_at ? new Date(share.last_used_at).toISOString() : null,
    active: share.revoked_at === null && expires > now,
  };
}

/** The links of the caller's namespace's sessions (request-scoped: bound to the caller's tenant). */
export class SessionShares {
  private readonly tenant: TenantStore;
  private readonly db: Knex;
  private readonly streams: ShareStreams;

  constructor(deps: { tenant: TenantStore; db: Knex; shareStreams: ShareStreams }) {
    this.tenant = deps.tenant;
    this.db = deps.db;
    this.streams = deps.shareStreams;
  }

  private async settings(): Promise<NamespaceSettings> {
    const row = (await this.db('namespaces').where({ tenant_id: this.tenant.tenantId }).first('settings')) as
      | { settings: NamespaceSettings }
      | undefined;
    return row?.settings ?? { session_record: false, connection_announcement: '' };
  }

  /** Makes a link to an active, recorded session of this namespace; answers it with its token, once. */
  async create(
    uid: string,
    caller: Caller,
    seconds: number,
    publicUrl: string,
  ): Promise<ShareView & { token: string; url: string }> {
    const session = await this.tenant.query(Session).findById(uid);
    if (!session) throw new NotFound('session');
    if ((await this.settings()).session_share_links !== true)
      throw new Forbidden("share links are off in this namespace's settings");
    if (session.closed_at !== null)
      throw new Unprocessable('the session has ended: share its recording instead');
    if (!session.recorded) throw new Unprocessable('the session is not recorded, so it cannot be shared');
    const token = randomBytes(32).toString('base64url');
    const id = randomBytes(16).toString('hex');
    const createdBy =
      caller.kind === 'user'
        ? { created_by: caller.userId, created_by_name: printable(caller.username) }
        : caller.kind === 'apiKey'
          ? { created_by: `key:${caller.keyId}`, created_by_name: 'an API key of the namespace' }
          : { created_by: caller.kind, created_by_name: caller.kind };
    const made = await this.tenant.transaction(async (store) => {
      // The count and the insert under the session's row lock: links made at the same moment cannot pass the limit.
      await store.query(Session).findById(uid).forUpdate().select('uid');
      const usable = (await store
        .query(SessionShare)
        .where({ session_uid: uid })
        .whereNull('revoked_at')
        .where('expires_at', '>', this.db.fn.now())
        .count({ n: '*' })
        .first()) as unknown as { n: number | string } | undefined;
      if (Number(usable?.n ?? 0) >= MAX_SHARES_PER_SESSION)
        throw new TooManyRequests('this session has as many share links as it may have; revoke one first');
      return store
        .query(SessionShare)
        .insert({
          id,
          session_uid: uid,
          token_hash: hashOf(token),
          ...createdBy,
          expires_at: this.db.raw('now() + make_interval(secs => ?)', [seconds]) as unknown as Date,
        } as Partial<SessionShare>)
        .returning('*');
    });
    const share = (Array.isArray(made) ? made[0] : made) as SessionShare;
    return { ...view(share, new Date()), token, url: `${publicUrl.replace(/\/+$/, '')}/share/${token}` };
  }

  async list(uid: string): Promise<ShareView[]> {
    const session = await this.tenant.query(Session).findById(uid).select('uid');
    if (!session) throw new NotFound('session');
    const rows = await this.tenant
      .query(SessionShare)
      .where({ session_uid: uid })
      .orderBy('created_at', 'desc');
    const now = new Date();
    return rows.map((r) => view(r, now));
  }

  /** Revokes a link: it stops working at once, on every server, streams open on it included. */
  async revoke(uid: string, id: string): Promise<void> {
    const share = await this.tenant.query(SessionShare).findById(id).where({ session_uid: uid });
    if (!share) throw new NotFound('share link');
    if (share.revoked_at === null)
      await this.tenant
        .query(SessionShare)
        .findById(id)
        .whereNull('revoked_at')
        .patch({
          revoked_at: this.db.fn.now() as unknown as Date,
        });
    await this.streams.revoked(id);
  }
}

/** A usable link, found by its token: its row and the namespace it is of. */
export interface UsableShare {
  share: Pick<SessionShare, 'id' | 'tenant_id' | 'session_uid' | 'expires_at'>;
  tenantId: string;
  session: Session;
}

/**
 * Finds the link a token opens, in whichever namespace: only while it is usable (not revoked, not expired, its
 * namespace still allows links). Every other case is the same `undefined`, so a token tells its holder nothing else.
 */
export async function usableShare(db: Knex, token: string): Promise<UsableShare | undefined> {
  if (!TOKEN.test(token)) return undefined;
  const row = (await db('session_shares')
    .join('namespaces', 'namespaces.tenant_id', 'session_shares.tenant_id')
    .where('session_shares.token_hash', hashOf(token))
    .whereNull('session_shares.revoked_at')
    .where('session_shares.expires_at', '>', db.fn.now())
    .first(
      'session_shares.id',
      'session_shares.tenant_id',
      'session_shares.session_uid',
      'session_shares.expires_at',
      'namespaces.settings as namespace_settings',
    )) as (UsableShare['share'] & { namespace_settings: NamespaceSettings }) | undefined;
  if (!row) return undefined;
  if (row.namespace_settings?.session_share_links !== true) return undefined;
  const store = new TenantStore(db, row.tenant_id);
  const session = await store.query(Session).findById(row.session_uid).withGraphFetched('device');
  if (!session) return undefined;
  const { id, tenant_id, session_uid, expires_at } = row;
  return { share: { id, tenant_id, session_uid, expires_at }, tenantId: tenant_id, session };
}

/** Counts a use of a link, on the link and as an event of its session (who came, from where). */
export async function recordShareUse(
  db: Knex,
  found: UsableShare,
  from: { ip: string; userAgent: string },
): Promise<void> {
  const store = new TenantStore(db, found.tenantId);
  await store
    .query(SessionShare)
    .findById(found.share.id)
    .patch({
      uses: db.raw('uses + 1') as unknown as number,
      last_used_at: db.fn.now() as unknown as Date,
    });
  await db('session_events').insert({
    session_uid: found.session.uid,
    type: 'share-viewed',
    seat: 0,
    data: JSON.stringify({
      share: found.share.id,
      ip: printable(from.ip, 64),
      user_agent: printable(from.userAgent, 200),
    }),
  });
}

/**
 * The streams this server holds on share links, so that a revocation, heard from whichever server made it, ends
 * them at once.
 */
export class ShareStreams {
  private readonly open = new Map<string, Set<() => void>>();
  private listening: Promise<unknown> | undefined;
  private unsubscribe: (() => Promise<void>) | undefined;

  constructor(private readonly deps: { cache: Cache; log: Logger }) {}

  /** Holds `end` for the link `id` until the returned function is called. */
  async hold(id: string, end: () => void): Promise<() => void> {
    this.listening ??= this.deps.cache
      .subscribe(REVOKE_CHANNEL, (message) => {
        for (const stop of [...(this.open.get(message) ?? [])]) stop();
      })
      .then((stop) => {
        this.unsubscribe = stop;
      });
    await this.listening;
    const set = this.open.get(id) ?? new Set();
    set.add(end);
    this.open.set(id, set);
    return () => {
      set.delete(end);
      if (set.size === 0) this.open.delete(id);
    };
  }

  /** How many streams this server holds on the link `id`. */
  count(id: string): number {
    return this.open.get(id)?.size ?? 0;
  }

  async revoked(id: string): Promise<void> {
    await this.deps.cache.publish(REVOKE_CHANNEL, id).catch((err: unknown) => {
      this.deps.log.warn({ err }, 'could not announce a revoked share link');
    });
  }

  async stop(): Promise<void> {
    for (const set of this.open.values()) for (const end of [...set]) end();
    this.open.clear();
    await this.unsubscribe?.().catch(() => {});
  }
}
