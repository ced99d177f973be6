import { PassThrough } from 'node:stream';
import {
  type Caller,
  defineRoute,
  printable,
  ServiceUnavailable,
  TooManyRequests,
  Unprocessable,
} from '@gatehouse/core';
import { Type as T } from '@sinclair/typebox';
import { uidParams } from '../sessions/schemas';
import { MAX_WATCHERS, SessionWatcher } from './watch';

/** How a watcher is named to the person at the client and to the other watchers. */
function watcherName(caller: Caller): string {
  return caller.kind === 'user' ? printable(caller.username) : 'an API key of the namespace';
}

/** `GET /api/sessions/:uid/live`: a live session's terminal as Server-Sent Events (watch.ts). */
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
      'Each `data` line is a JSON object: `out` (`data`, base64 terminal output, with `width` and `height`), ' +
      '`size` (a terminal size change), `watchers` (the `names` of everyone watching) and `end`. The person in ' +
      'the session reads a line on their terminal when someone starts or stops watching. The role that reads ' +
      'recordings may watch; a session that is not recorded cannot be watched (422), nor one that has ended ' +
      `(422: play its recording). At most ${MAX_WATCHERS} watchers per session; one more answers 429.`,
    tags: ['sessions'],
    schema: {
      params: uidParams,
      query: T.Object(
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
      ),
      response: { 200: null, 404: null, 422: null, 429: null },
    },
    async handler({ params, query, services, caller, ctx, stillAllowed }) {
      const sessions = services.namespaceSessions;
      const session = await sessions.get(params.uid);
      if (!session.active) throw new Unprocessable('the session has ended: play its recording instead');
      if (!session.recorded) throw new Unprocessable('the session is not recorded, so it cannot be watched');
      const seat = query.seat ?? 0;
      const watcher = new SessionWatcher({
        cache: services.cache,
        log: services.log,
        uid: params.uid,
        seat,
        name: watcherName(caller),
        history: async () =>
          (await sessions.records(params.uid, seat)).map(({ message, width, height }) => ({
            message,
            width,
            height,
          })),
        allowed: stillAllowed,
      });
      const refused = await watcher.start();
      if (refused === 'full') throw new TooManyRequests('this session has as many watchers as it may have');
      if (refused === 'not-live') throw new Unprocessable('the session is not live on any gateway now');
      if (refused === 'unavailable') throw new ServiceUnavailable('watching is unavailable now');
      // The stream stays open: no socket timeout, no compression (it would hold output back), no caching.
      ctx.req.socket.setTimeout(0);
      ctx.req.socket.setNoDelay(true);
      ctx.compress = false;
      ctx.set('Cache-Control', 'no-store');
      ctx.set('X-Accel-Buffering', 'no');
      ctx.type = 'text/event-stream; charset=utf-8';
      const out = new PassThrough();
      ctx.res.once('close', () => out.destroy());
      ctx.body = out;
      void watcher.follow(out);
      return undefined;
    },
  }),
];
