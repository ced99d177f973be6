import {
  type Caller,
  defineRoute,
  Forbidden,
  Invalid,
  NotFound,
  pageQuery,
  printable,
} from '@gatehouse/core';
import { Type as T } from '@sinclair/typebox';
import { toAsciicast } from './asciicast';
import {
  recordBody,
  recordEntrySchema,
  seatParams,
  sessionFilters,
  sessionSchema,
  uidParams,
} from './schemas';

/** A time the store keeps as written (years 1 to 9999), or a 400 naming the field. */
function instant(field: string, value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const d = new Date(value);
  const year = d.getUTCFullYear();
  if (Number.isNaN(d.getTime()) || year < 1 || year > 9999)
    throw new Invalid([field], `${field} is not a time`);
  return d;
}

const tags = ['sessions'];

/**
 * What the person in a closed session reads: who closed it and the reason given, with control characters made
 * harmless (it is written to their terminal).
 */
function closeNotice(caller: Caller, reason: string | undefined): string {
  const who = caller.kind === 'user' ? printable(caller.username) : 'an API key of the namespace';
  const why = reason?.trim() ? `: ${printable(reason.trim(), 200)}` : '';
  return `gatehouse: ${who} closed this session${why}`;
}

/** Sessions and their recordings. */
export const sessionRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/sessions',
    auth: ['user', 'apiKey'],
    role: 'observer',
    summary: 'List the namespace sessions, newest first',
    description:
      'Filters narrow the list and combine: by the account on the device, the device, active or ended, and a ' +
      'range of start times (started_after inclusive, started_before exclusive).',
    tags,
    paged: true,
    schema: {
      query: T.Object({ ...pageQuery, ...sessionFilters }, { additionalProperties: true }),
      response: { 200: T.Array(sessionSchema) },
      headers: { 'X-Total-Count': 'Number of sessions that match.' },
    },
    handler: ({ query, services }) => {
      const after = instant('started_after', query.started_after);
      const before = instant('started_before', query.started_before);
      if (after && before && after > before)
        throw new Invalid(['started_after', 'started_before'], 'started_after is later than started_before');
      return services.namespaceSessions.list(query, {
        username: query.username,
        deviceUid: query.device_uid,
        active: query.active,
        startedAfter: after,
        startedBefore: before,
      });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/sessions/:uid',
    auth: ['user', 'apiKey'],
    role: 'observer',
    summary: 'Get a session with its events',
    tags,
    schema: { params: uidParams, response: { 200: sessionSchema } },
    async handler({ params, services }) {
      return services.namespaceSessions.get(params.uid);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/sessions/:uid',
    auth: ['internal'],
    summary: 'Set whether a session signed in (the gateway only)',
    description:
      "Whether a session signed in is the gateway's word alone: served only on the internal listener " +
      '(internal.host:internal.port, loopback by default), where the gateways of the installation reach it. ' +
      'The public listener answers 404; no user, API key or device token can mark a session.',
    tags,
    schema: {
      params: uidParams,
      body: T.Object({ authenticated: T.Boolean() }),
      response: { 200: sessionSchema, 404: null },
    },
    async handler({ params, body, services }) {
      const tenant = await services.sessions.tenantOf(params.uid);
      await services.sessions.update(tenant, params.uid, { authenticated: body.authenticated });
      return services.sessions.get(tenant, params.uid);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/sessions/:uid/close',
    auth: ['user', 'apiKey'],
    role: 'operator',
    summary: 'Close a session: ends it on the gateway and the device',
    tags,
    schema: {
      params: uidParams,
      body: T.Object({
        device: T.Optional(T.String({ description: 'The uid of the session device.' })),
        reason: T.Optional(
          T.String({
            maxLength: 200,
            description: 'Shown to the person in the session, after who closed it, before it ends.',
          }),
        ),
      }),
      response: { 200: T.Object({}) },
    },
    async handler({ params, body, caller, services }) {
      const session = await services.namespaceSessions.get(params.uid);
      if (body.device !== undefined && body.device !== session.device_uid) throw new NotFound('session');
      await services.namespaceSessions.close(params.uid, closeNotice(caller, body.reason));
      return {};
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/sessions/:uid/records/:seat',
    auth: ['device'],
    summary: 'Add terminal output to the recording of a seat (the device carrying the session only)',
    description:
      'Only the device that carries the session may add to its recording, with its device token: users, API ' +
      'keys and other devices cannot (a session of another device is 404). 422 when the session is closed or ' +
      'session recording is off in the namespace.',
    tags,
    schema: { params: seatParams, body: recordBody, response: { 200: T.Object({}), 404: null, 422: null } },
    async handler({ params, body, services, tenantId, caller }) {
      const tenant = tenantId();
      if (caller.kind !== 'device') throw new Forbidden('only the device carrying the session may record it');
      if (body.uid !== params.uid || body.seat !== params.seat)
        throw new Forbidden('uid and seat differ from the path');
      const ns = await services.namespaces.byTenant(tenant);
      await services.namespaceSessions.record(
        params.uid,
        { seat: params.seat, message: body.message, width: body.width, height: body.height },
        ns?.settings.session_record ?? false,
        caller.uid,
      );
      return {};
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/sessions/:uid/records/:seat',
    auth: ['user', 'apiKey'],
    role: 'observer',
    summary: 'Get the recording of a seat',
    description:
      'JSON entries by default; with `format=asciicast` (or `Accept: application/x-asciicast`) an asciicast v2 ' +
      'file that asciinema plays.',
    tags,
    schema: {
      params: seatParams,
      query: T.Object(
        { format: T.Optional(T.Union([T.Literal('json'), T.Literal('asciicast')])) },
        { additionalProperties: true },
      ),
      response: { 200: T.Array(recordEntrySchema) },
    },
    async handler({ params, query, services, ctx }) {
      const entries = await services.namespaceSessions.records(params.uid, params.seat);
      const wantsCast =
        query.format === 'asciicast' ||
        (query.format === undefined &&
          ctx.accepts('json', 'application/x-asciicast') === 'application/x-asciicast');
      if (!wantsCast) return entries;
      const session = await services.namespaceSessions.get(params.uid);
      ctx.type = 'application/x-asciicast';
      ctx.set('Content-Disposition', `attachment; filename="${params.uid.slice(0, 12)}-${params.seat}.cast"`);
      ctx.body = toAsciicast(entries, {
        term: session.term,
        title: `${session.username} ${session.device_uid.slice(0, 8)}`,
      });
      return undefined;
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/sessions/:uid/records/:seat',
    auth: ['user', 'apiKey'],
    role: 'administrator',
    summary: 'Delete the recording of a seat',
    tags,
    schema: { params: seatParams, response: { 200: T.Object({}) } },
    async handler({ params, services }) {
      await services.namespaceSessions.deleteRecords(params.uid, params.seat);
      return {};
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/users/security',
    auth: ['user', 'apiKey'],
    role: 'observer',
    summary: 'Whether the namespace records sessions',
    tags,
    schema: { response: { 200: T.Boolean() } },
    async handler({ services, tenantId }) {
      const ns = await services.namespaces.byTenant(tenantId());
      if (!ns) throw new NotFound('namespace');
      return ns.settings.session_record;
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/api/users/security/:tenant',
    auth: ['user'],
    role: 'administrator',
    summary: 'Turn session recording on or off for the namespace',
    tags,
    schema: {
      params: T.Object({ tenant: T.String({ format: 'uuid' }) }),
      body: T.Object({ session_record: T.Boolean() }),
      response: { 200: T.Boolean() },
    },
    async handler({ params, body, services, tenantId }) {
      if (params.tenant !== tenantId()) throw new Forbidden('switch to that namespace first');
      await services.namespaceSessions.setRecording(body.session_record);
      return body.session_record;
    },
  }),
];
