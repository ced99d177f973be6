import {
  type Caller,
  type Cradle,
  defineRoute,
  NotFound,
  printable,
  ServiceUnavailable,
  TenantStore,
  TooManyRequests,
  Unprocessable,
} from '@gatehouse/core';
import { Type as T } from '@sinclair/typebox';
import type { Context } from 'koa';
import { eventStream } from '../events/stream';
import { Session, SessionRecord } from '../sessions/model';
import { sessionUidSchema, uidParams } from '../sessions/schemas';
import {
  DEFAULT_SHARE_SECONDS,
  MAX_SHARE_SECONDS,
  MAX_SHARES_PER_SESSION,
  MIN_SHARE_SECONDS,
  recordShareUse,
  usableShare,
} from './shares';
import { type HistorySource, MAX_WATCHERS, SessionWatcher } from './watch';

/** How a watcher is named to the person at the client and to the other watchers. */
function watcherName(caller: Caller): string {
  return caller.kind === 'user' ? printable(caller.username) : 'an API key of the namespace';
}

/** Streams one link may hold open on one server at once. */
const MAX_STREAMS_PER_SHARE = 3;

/** The name a share link's viewer goes by: they have no account. */
const SHARE_VIEWER = 'someone with a share link';

const seatQuery = T.Object(
  {
    seat: T.Optional(
      T.Integer({
        minimum: 0,
        maximum: 1_000_000,
        description: 'The seat (channel) to watch; 0 by default.',
      }),
    ),
  },
  { additionalProperties: true },
);

const streamDescription =
  'Each `data` line is a JSON object: `out` (`data`, base64 terminal output, with `width` and `height`), `size` ' +
  '(a terminal size change), `watchers` (the `names` of everyone watching) and `end` (with a `reason` when a ' +
  'share link was revoked or expired).';

function history(store: TenantStore, uid: string, seat: number): HistorySource {
  const rows = () => store.query(SessionRecord).where({ session_uid: uid, seat });
  return {
    async count() {
      const row = (await rows().count({ n: '*' }).first()) as unknown as { n: number | string } | undefined;
      return Number(row?.n ?? 0);
    },
    async page(afterId, limit) {
      const page = await rows()
        .where('id', '>', afterId)
        .orderBy('id')
        .limit(limit)
        .select('id', 'message', 'width', 'height');
      return page.map(({ id, message, width, height }) => ({ id: Number(id), message, width, height }));
    },
  };
}

/** Whether a session is still open, as its row says (a gateway that died leaves its sessions to be closed). */
async function stillOpen(store: TenantStore, uid: string): Promise<boolean> {
  const row = await store.query(Session).findById(uid).select('closed_at');
  return row !== undefined && row.closed_at === null;
}

/** Starts `watcher` and answers with its stream, or refuses as the watch's start says. */
async function stream(ctx: Context, watcher: SessionWatcher): Promise<void> {
  const refused = await watcher.start();
  if (refused === 'full') throw new TooManyRequests('this session has as many watchers as it may have');
  if (refused === 'not-live') throw new Unprocessable('the session is not live on any gateway now');
  if (refused === 'unavailable') throw new ServiceUnavailable('watching is unavailable now');
  const out = eventStream(ctx);
  void watcher.follow(out);
}

const shareSchema = T.Object({
  id: T.String(),
  session_uid: sessionUidSchema,
  created_by: T.String({ description: 'Who made the link.' }),
  created_at: T.String({ format: 'date-time' }),
  expires_at: T.String({ format: 'date-time' }),
  revoked_at: T.Union([T.String({ format: 'date-time' }), T.Null()]),
  uses: T.Integer({ description: 'How many times the link was opened to watch.' }),
  last_used_at: T.Union([T.String({ format: 'date-time' }), T.Null()]),
  active: T.Boolean({ description: 'Usable now: neither revoked nor expired.' }),
});

const tokenParams = T.Object({ token: T.String({ maxLength: 64 }) });

/** A usable link for `token`, else the one 404 whatever the reason (a token tells its holder nothing else). */
async function shareFor(services: Cradle, token: string) {
  const found = await usableShare(services.db, token);
  if (!found) throw new NotFound('share link');
  return found;
}

/** `GET /api/sessions/:uid/live` and share links (watch.ts, shares.ts). */
export const watchRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/sessions/:uid/live',
    auth: ['user', 'apiKey'],
    role: 'observer',
    summary: 'Watch a live session',
    description:
      'A long-lived `text/event-stream` answer with the terminal of one seat of an active, recorded session: ' +
      'first its recording so far, then its output as it passes, from whichever server carries the session. ' +
      `${streamDescription} The person in the session reads a line on their terminal when someone starts or ` +
      'stops watching. The role that reads recordings may watch; a session that is not recorded cannot be ' +
      `watched (422), nor one that has ended (422: play its recording). At most ${MAX_WATCHERS} watchers per ` +
      'session; one more answers 429.',
    tags: ['sessions'],
    schema: { params: uidParams, query: seatQuery, response: { 200: null, 404: null, 422: null, 429: null } },
    async handler({ params, query, services, caller, ctx, stillAllowed }) {
      const session = await services.namespaceSessions.get(params.uid);
      if (!session.active) throw new Unprocessable('the session has ended: play its recording instead');
      if (!session.recorded) throw new Unprocessable('the session is not recorded, so it cannot be watched');
      const seat = query.seat ?? 0;
      await stream(
        ctx,
        new SessionWatcher({
          cache: services.cache,
          log: services.log,
          uid: params.uid,
          seat,
          name: watcherName(caller),
          history: history(services.tenant, params.uid, seat),
          allowed: stillAllowed,
          live: () => stillOpen(services.tenant, params.uid),
        }),
      );
      return undefined;
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/sessions/:uid/shares',
    auth: ['user', 'apiKey'],
    role: 'administrator',
    summary: 'Make a share link to a live session',
    description:
      'A read-only link to watch an active, recorded session, for someone without an account: its `url` (with ' +
      'the token, given only in this answer) works until `expires_at` or until revoked. Off unless the ' +
      "namespace's settings.session_share_links is on (403). Every use is counted on the link and kept as a " +
      `\`share-viewed\` event of the session. At most ${MAX_SHARES_PER_SESSION} usable links per session (429).`,
    tags: ['sessions'],
    schema: {
      params: uidParams,
      body: T.Object(
        {
          expires_in: T.Optional(
            T.Integer({
              minimum: MIN_SHARE_SECONDS,
              maximum: MAX_SHARE_SECONDS,
              description: `Seconds the link works, ${MIN_SHARE_SECONDS} to ${MAX_SHARE_SECONDS}; ${DEFAULT_SHARE_SECONDS} by default.`,
            }),
          ),
        },
        { additionalProperties: false },
      ),
      response: {
        200: T.Intersect([shareSchema, T.Object({ token: T.String(), url: T.String() })]),
        403: null,
        404: null,
        422: null,
        429: null,
      },
    },
    handler: ({ params, body, caller, services }) =>
      services.sessionShares.create(
        params.uid,
        caller,
        body.expires_in ?? DEFAULT_SHARE_SECONDS,
        services.config.publicUrl,
      ),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/sessions/:uid/shares',
    auth: ['user', 'apiKey'],
    role: 'administrator',
    summary: 'List the share links of a session',
    tags: ['sessions'],
    schema: { params: uidParams, response: { 200: T.Array(shareSchema), 404: null } },
    handler: ({ params, services }) => services.sessionShares.list(params.uid),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/sessions/:uid/shares/:id',
    auth: ['user', 'apiKey'],
    role: 'administrator',
    summary: 'Revoke a share link',
    description: 'The link stops working at once, and whoever watches through it stops watching.',
    tags: ['sessions'],
    schema: {
      params: T.Object({ uid: sessionUidSchema, id: T.String({ minLength: 1, maxLength: 64 }) }),
      response: { 200: T.Object({}), 404: null },
    },
    async handler({ params, services }) {
      await services.sessionShares.revoke(params.uid, params.id);
      return {};
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/shares/:token',
    auth: ['none'],
    summary: 'What a share link shows',
    description:
      'For the page a share link opens: the device and the session, and until when the link works. 404 for a ' +
      'token that opens nothing now, whatever the reason (unknown, revoked, expired, links turned off).',
    tags: ['sessions'],
    schema: {
      params: tokenParams,
      response: {
        200: T.Object({
          device: T.String({ description: "The device's name." }),
          username: T.String({ description: 'The account on the device.' }),
          started_at: T.String({ format: 'date-time' }),
          active: T.Boolean({ description: 'Whether the session is still open (watchable).' }),
          expires_at: T.String({ format: 'date-time' }),
        }),
        404: null,
      },
    },
    async handler({ params, services, ctx }) {
      const { session, share } = await shareFor(services, params.token);
      ctx.set('Cache-Control', 'no-store');
      return {
        device: session.device?.name ?? session.device_uid.slice(0, 12),
        username: session.username,
        started_at: new Date(session.started_at).toISOString(),
        active: session.closed_at === null,
        expires_at: new Date(share.expires_at).toISOString(),
      };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/shares/:token/live',
    auth: ['none'],
    summary: 'Watch a live session through a share link',
    description:
      'As `GET /api/sessions/{uid}/live`, for the holder of a share link, without an account. The stream ends ' +
      'when the link expires or is revoked (`end` with its `reason`), or within 15 seconds of its namespace ' +
      'turning links off. The ' +
      `person in the session reads "${SHARE_VIEWER} is watching this session".`,
    tags: ['sessions'],
    schema: {
      params: tokenParams,
      query: seatQuery,
      response: { 200: null, 404: null, 422: null, 429: null },
    },
    async handler({ params, query, services, ctx }) {
      const found = await shareFor(services, params.token);
      const { session, share, tenantId } = found;
      if (session.closed_at !== null) throw new Unprocessable('the session has ended');
      const seat = query.seat ?? 0;
      if (services.shareStreams.count(share.id) >= MAX_STREAMS_PER_SHARE)
        throw new TooManyRequests('this link is being watched from as many places as it may be');
      const store = new TenantStore(services.db, tenantId);
      const watcher = new SessionWatcher({
        cache: services.cache,
        log: services.log,
        uid: session.uid,
        seat,
        name: SHARE_VIEWER,
        anonymous: true,
        live: () => stillOpen(store, session.uid),
        history: history(store, session.uid, seat),
        // At each heartbeat: still a usable link (not revoked, its namespace still allows links).
        allowed: async () => (await usableShare(services.db, params.token))?.share.id === share.id,
      });
      const release = await services.shareStreams.hold(share.id, () => watcher.finish('revoked'));
      const expiry = setTimeout(
        () => watcher.finish('expired'),
        Math.max(0, new Date(share.expires_at).getTime() - Date.now()),
      );
      expiry.unref();
      ctx.res.once('close', () => {
        clearTimeout(expiry);
        release();
      });
      try {
        await stream(ctx, watcher);
      } catch (error) {
        clearTimeout(expiry);
        release();
        throw error;
      }
      await recordShareUse(services.db, found, { ip: ctx.ip, userAgent: ctx.get('user-agent') });
      return undefined;
    },
  }),
];
