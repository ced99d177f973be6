import { defineRoute, ServiceUnavailable, TooManyRequests } from '@gatehouse/core';
import { MAX_STREAMS_PER_CALLER } from './service';
import { eventStream } from './stream';

/** `GET /api/events`: the caller's namespace's events as Server-Sent Events (docs/content/developers/event-stream.md). */
export const eventRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/events',
    auth: ['user', 'apiKey'],
    role: 'observer',
    summary: 'Stream the namespace events',
    description:
      'A long-lived `text/event-stream` answer: one event per device status change (`device.status`), device ' +
      'connection change (`device.online`) and session start or end (`session.started`, `session.closed`) of ' +
      "the caller's namespace, with a comment line every 15 seconds. Each `data` line is a small JSON object " +
      `(kind, device uid, status or online, session uid). At most ${MAX_STREAMS_PER_CALLER} streams per user or ` +
      'API key are held at once on one server; one more answers 429. The caller is checked again at every ' +
      'comment line: a stream whose member was removed, key revoked or session signed out ends.',
    tags: ['devices'],
    schema: { response: { 200: null } },
    async handler({ services, tenantId, caller, ctx, stillAllowed }) {
      const tenant = tenantId();
      const owner =
        caller.kind === 'user'
          ? `user:${caller.userId}`
          : caller.kind === 'apiKey'
            ? `key:${caller.keyId}`
            : '';
      const events = services.consoleEvents;
      if (events.full(owner)) throw new TooManyRequests('too many event streams open');
      try {
        await events.listen();
      } catch {
        throw new ServiceUnavailable('the event stream is unavailable');
      }
      const out = eventStream(ctx);
      events.add(tenant, owner, out, stillAllowed);
      out.write('retry: 2000\n: connected\n\n');
      return undefined;
    },
  }),
];
