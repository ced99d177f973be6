import { defineRoute, listQuery, NotFound, type RouteDef, type RouteSchema } from '@gatehouse/core';
import { Type as T } from '@sinclair/typebox';
import type { DeviceKind } from './model';
import {
  customFieldKey,
  customFieldValue,
  device,
  deviceAuthAnswer,
  deviceAuthBody,
  deviceStatuses,
  deviceUid,
  deviceUpdate,
  MAX_CUSTOM_FIELDS,
  tag,
} from './schemas';
import { customFieldSort, deviceSortFields } from './service';

const uidParams = T.Object({ uid: deviceUid });
const fieldParams = T.Object({ uid: deviceUid, key: customFieldKey });
/** The query of the calls that count a namespace's devices of one status (operating systems, field keys). */
const countedStatus = T.Object({
  status: T.Union(
    deviceStatuses.map((s) => T.Literal(s)),
    { default: 'accepted', description: 'Which status to count.' },
  ),
});

/** The proof of possession an agent sends with its registration (agent/protocol.ts). */
const agentProofHeaders = {
  'X-Gatehouse-Agent-Protocol': { description: 'Agent protocol version: 2.', required: true },
  'X-Gatehouse-Timestamp': {
    description: 'Unix seconds by the server clock (the agent corrects by the Date header); within 300 s.',
    required: true,
  },
  'X-Gatehouse-Nonce': { description: '16 to 64 base64url characters, never reused.', required: true },
  'X-Gatehouse-Signature': {
    description: 'Base64 signature by the device private key over the proof text (agent protocol 2).',
    required: true,
  },
};

/** The agent's registration and availability call; repeated every 30 s. */
function agentAuth(path: string, summary: string) {
  return defineRoute({
    method: 'POST',
    path,
    auth: ['none'],
    summary,
    description:
      'New devices are pending. Agent protocol 2: the request carries X-Gatehouse-Agent-Protocol: 2, ' +
      'X-Gatehouse-Timestamp (unix seconds), X-Gatehouse-Nonce (fresh, base64url) and X-Gatehouse-Signature ' +
      '(base64, by the device private key over the proof text of agent/protocol.ts), proving the agent holds ' +
      'the key of public_key. No or another protocol: 403 with a message to update the agent; a bad, stale or ' +
      'replayed proof: 401; a public_key that is not a PEM public key: 400 ["public_key"]; unknown tenant: 404. ' +
      'A new device (or a removed one coming back) with a valid install_key of the namespace is trusted; ' +
      'without one it is refused with 403 where the namespace requires a key (settings.require_install_key), ' +
      'and an install_key that is unknown, revoked, expired or used up is 403. A new device is bounded: 429 ' +
      'with Retry-After beyond limits.registrationsPerMinute new devices without a key from one source, beyond ' +
      'limits.pendingPerSource or limits.pendingPerBlock pending devices without a key from one source or ' +
      'block, or when the namespace keeps limits.pendingDevices pending ones and none can make way (the oldest ' +
      'keyless registration of the block holding the most makes way for a keyed one, or for one from a block ' +
      'holding at least two fewer). Agents repeat this call as their availability signal; for a known device ' +
      'it is a single UPDATE and install_key is not looked at.',
    tags: ['devices'],
    schema: {
      body: deviceAuthBody,
      requestHeaders: agentProofHeaders,
      response: { 200: deviceAuthAnswer, 401: null, 403: null, 404: null, 429: null },
    },
    async handler({ body, ctx, services }) {
      return services.devices.authenticate(body, ctx.ip, ctx.headers);
    },
  });
}

/** Longest acceptance wait an agent may ask for: under the usual 60 s idle timeout of proxies in front. */
const MAX_WAIT_SECONDS = 55;

/** A pending agent holds this call so that an acceptance reaches it at once. */
const acceptanceWait = defineRoute({
  method: 'GET',
  path: '/api/devices/auth/wait',
  auth: ['device'],
  summary: 'Wait for the device to be accepted (agents)',
  description:
    'Called by a pending agent with its device token. Answers at once when the device is not pending; otherwise ' +
    'when its status changes (an acceptance on any server of the installation) or after `timeout` seconds, ' +
    'with the status then. The agent dials its tunnel as soon as the answer is accepted.',
  tags: ['devices'],
  schema: {
    query: T.Object({
      timeout: T.Integer({
        minimum: 1,
        maximum: MAX_WAIT_SECONDS,
        default: 25,
        description: 'Seconds to wait at most while the device is pending.',
      }),
    }),
    response: { 200: T.Object({ status: T.Union(deviceStatuses.map((s) => T.Literal(s))) }) },
  },
  async handler({ query, caller, ctx, services }) {
    if (caller.kind !== 'device') throw new NotFound('device');
    // The agent hanging up ends the wait (and frees its place) at once.
    const hungUp = new AbortController();
    ctx.res.once('close', () => hungUp.abort());
    const status = await services.devices.waitForAcceptance(
      caller.tenantId,
      caller.uid,
      query.timeout * 1000,
      hungUp.signal,
    );
    return { status: status as (typeof deviceStatuses)[number] };
  },
});

/**
 * The per-kind device calls: the same set under `/api/devices` (every agent, wherever it runs)
 * and `/api/containers` (containers a container-engine connector exposes).
 */
function deviceCalls(kind: DeviceKind): RouteDef<RouteSchema>[] {
  const base = kind === 'container' ? '/api/containers' : '/api/devices';
  const noun = kind;
  const group = kind === 'container' ? 'containers' : 'devices';
  const routes = [
    defineRoute({
      method: 'GET',
      path: base,
      auth: ['user', 'apiKey'],
      role: 'observer',
      summary: `List ${noun}s`,
      description:
        (kind === 'container'
          ? 'Containers that a container-engine connector exposes; an agent running inside a container is a ' +
            'device and is listed under /api/devices. '
          : 'Every registered agent, wherever it runs (info.platform says docker inside a container). ') +
        'Default: status accepted, sorted by last_seen descending. The total is in X-Total-Count.',
      tags: [group],
      paged: true,
      schema: {
        query: listQuery({
          sortBy: deviceSortFields,
          sortDefault: 'last_seen',
          sortPattern: customFieldSort,
          extra: {
            status: T.Union(
              deviceStatuses.map((s) => T.Literal(s)),
              { default: 'accepted', description: 'Which status to list.' },
            ),
          },
        }),
        response: { 200: T.Array(device) },
        headers: { 'X-Total-Count': 'Total number of matching items.' },
      },
      handler({ query, services }) {
        return services.namespaceDevices.list(kind, query);
      },
    }),
    defineRoute({
      method: 'GET',
      path: `${base}/os`,
      auth: ['user', 'apiKey'],
      role: 'observer',
      summary: `Operating systems of the ${noun}s`,
      description:
        `The operating systems (info.id and info.pretty_name) the namespace's ${noun}s of one status run, with ` +
        'how many run each, most used first (at most 100): the values the list filters on as info.id.',
      tags: [group],
      schema: {
        query: countedStatus,
        response: {
          200: T.Array(
            T.Object({ id: T.String(), pretty_name: T.String(), count: T.Integer({ minimum: 1 }) }),
          ),
        },
      },
      handler({ query, services }) {
        return services.namespaceDevices.operatingSystems(kind, query.status);
      },
    }),
    defineRoute({
      method: 'GET',
      path: `${base}/custom_fields`,
      auth: ['user', 'apiKey'],
      role: 'observer',
      summary: `Custom field keys of the ${noun}s`,
      description:
        `The custom field keys the namespace's ${noun}s of one status hold, with how many hold each, most held ` +
        'first (at most 100): the keys the list filters and sorts on as custom_fields.<key>.',
      tags: [group],
      schema: {
        query: countedStatus,
        response: { 200: T.Array(T.Object({ key: customFieldKey, count: T.Integer({ minimum: 1 }) })) },
      },
      handler({ query, services }) {
        return services.namespaceDevices.customFieldKeys(kind, query.status);
      },
    }),
    defineRoute({
      method: 'GET',
      path: `${base}/:uid`,
      auth: ['user', 'apiKey'],
      role: 'observer',
      summary: `Get a ${noun}`,
      tags: [group],
      schema: { params: uidParams, response: { 200: device } },
      async handler({ params, services }) {
        return services.namespaceDevices.get(kind, params.uid);
      },
    }),
    defineRoute({
      method: 'PUT',
      path: `${base}/:uid`,
      auth: ['user', 'apiKey'],
      role: 'operator',
      summary: `Rename a ${noun} or set its public_url`,
      description: 'A name used by another device of the namespace answers 409 ["name"].',
      tags: [group],
      schema: { params: uidParams, body: deviceUpdate, response: { 200: device, 409: null } },
      async handler({ params, body, services }) {
        return services.namespaceDevices.update(kind, params.uid, body);
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: `${base}/:uid`,
      auth: ['user', 'apiKey'],
      role: 'administrator',
      summary: `Remove a ${noun}`,
      description:
        'Soft delete: the status becomes removed; an accepted device keeps its slot for 720 hours.',
      tags: [group],
      schema: { params: uidParams, response: { 200: T.Object({}) } },
      async handler({ params, services }) {
        await services.namespaceDevices.remove(kind, params.uid);
        return {};
      },
    }),
    defineRoute({
      method: 'PATCH',
      path: `${base}/:uid/accept`,
      auth: ['user', 'apiKey'],
      role: 'administrator',
      summary: `Accept a ${noun}`,
      description:
        'Within the namespace device limit (accepted plus removed devices; at the limit only devices removed ' +
        'within 720 hours). 402 when the limit or billing refuses; 409 ["name"] when another accepted device ' +
        'has its name.',
      tags: [group],
      schema: { params: uidParams, response: { 200: device, 402: null, 409: null } },
      async handler({ params, services }) {
        return services.namespaceDevices.accept(kind, params.uid);
      },
    }),
    defineRoute({
      method: 'PATCH',
      path: `${base}/:uid/:status`,
      auth: ['user', 'apiKey'],
      role: 'administrator',
      summary: `Change a ${noun}'s status`,
      description: 'accept, reject, pending or unused. Any status but accepted closes its tunnel at once.',
      tags: [group],
      schema: {
        params: T.Object({
          uid: deviceUid,
          status: T.Union([
            T.Literal('accept'),
            T.Literal('reject'),
            T.Literal('pending'),
            T.Literal('unused'),
          ]),
        }),
        response: { 200: device, 402: null, 409: null },
      },
      async handler({ params, services }) {
        return services.namespaceDevices.setStatus(kind, params.uid, params.status);
      },
    }),
    defineRoute({
      method: 'POST',
      path: `${base}/:uid/tags`,
      auth: ['user', 'apiKey'],
      role: 'operator',
      summary: `Add a tag to a ${noun}`,
      description: 'At most 3 tags per device (a fourth is 406); a tag it already has is 409.',
      tags: [group, 'tags'],
      schema: {
        params: uidParams,
        body: T.Object({ tag }),
        response: { 200: T.Object({}), 406: null, 409: null },
      },
      async handler({ params, body, services }) {
        await services.tags.add(kind, params.uid, body.tag);
        return {};
      },
    }),
    defineRoute({
      method: 'PUT',
      path: `${base}/:uid/tags`,
      auth: ['user', 'apiKey'],
      role: 'operator',
      summary: `Replace a ${noun}'s tags`,
      description: '1 to 3 unique tags; more than 3 is 406.',
      tags: [group, 'tags'],
      schema: {
        params: uidParams,
        body: T.Object({ tags: T.Array(tag, { minItems: 1, maxItems: 64 }) }),
        response: { 200: T.Object({}), 406: null },
      },
      async handler({ params, body, services }) {
        await services.tags.replace(kind, params.uid, body.tags);
        return {};
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: `${base}/:uid/tags/:tag`,
      auth: ['user', 'apiKey'],
      role: 'operator',
      summary: `Remove a tag from a ${noun}`,
      tags: [group, 'tags'],
      schema: { params: T.Object({ uid: deviceUid, tag }), response: { 200: T.Object({}) } },
      async handler({ params, services }) {
        await services.tags.removeFromDevice(kind, params.uid, params.tag);
        return {};
      },
    }),
    defineRoute({
      method: 'PUT',
      path: `${base}/:uid/custom_fields/:key`,
      auth: ['user', 'apiKey'],
      role: 'operator',
      summary: `Set a custom field of a ${noun}`,
      description:
        'Sets or changes one custom field; the same key and value again changes nothing. Adding a key when the ' +
        `${noun} holds ${MAX_CUSTOM_FIELDS} already is 400 ["key"]. The list filters on custom_fields.<key> ` +
        '(eq, contains) and sorts by it (sort_by=custom_fields.<key>).',
      tags: [group],
      schema: {
        params: fieldParams,
        body: T.Object({ value: customFieldValue }, { additionalProperties: false }),
        response: { 200: T.Object({}) },
      },
      async handler({ params, body, services }) {
        await services.namespaceDevices.setCustomField(kind, params.uid, params.key, body.value);
        return {};
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: `${base}/:uid/custom_fields/:key`,
      auth: ['user', 'apiKey'],
      role: 'operator',
      summary: `Remove a custom field of a ${noun}`,
      description: 'Removing a key the device does not hold is no error (200).',
      tags: [group],
      schema: { params: fieldParams, response: { 200: T.Object({}) } },
      async handler({ params, services }) {
        await services.namespaceDevices.removeCustomField(kind, params.uid, params.key);
        return {};
      },
    }),
  ];
  return routes as unknown as RouteDef<RouteSchema>[];
}

/** Devices, containers, the agent calls and the internal offline call. */
export const deviceRoutes: RouteDef<RouteSchema>[] = [
  agentAuth('/api/devices/auth', 'Agent registration and availability'),
  agentAuth('/api/auth/device', 'Agent registration (alias of /api/devices/auth)'),
  acceptanceWait as unknown as RouteDef<RouteSchema>,
  ...deviceCalls('device'),
  ...deviceCalls('container'),
  defineRoute({
    method: 'POST',
    path: '/internal/devices/:uid/offline',
    auth: ['internal'],
    summary: 'Mark a device offline (internal)',
    description:
      'Served only on the internal listener (internal.host:internal.port, loopback by default); the public ' +
      'listener answers 404. Drops the device tunnel held by this server.',
    tags: ['internal'],
    schema: { params: uidParams, response: { 200: T.Object({}), 404: null } },
    async handler({ params, services }) {
      if (!(await services.devices.findForSsh({ uid: params.uid }))) throw new NotFound('device');
      await services.tunnelPresence.offline([params.uid]);
      services.tunnelHub.disconnect(params.uid);
      return {};
    },
  }) as unknown as RouteDef<RouteSchema>,
];
