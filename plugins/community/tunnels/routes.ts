import { defineRoute, pageQuery } from '@gatehouse/core';
import { Type as T } from '@sinclair/typebox';
import { deviceUid } from '../devices/schemas';
import { tunnel } from './schemas';

const uidParams = T.Object({ uid: deviceUid });

/** HTTP tunnels of a device. */
export const tunnelRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/devices/:uid/tunnels',
    auth: ['user', 'apiKey'],
    role: 'observer',
    summary: "List a device's HTTP tunnels",
    description: 'Unexpired tunnels, newest first. The total is in X-Total-Count.',
    tags: ['tunnels'],
    paged: true,
    schema: {
      params: uidParams,
      query: T.Object(pageQuery, { additionalProperties: true }),
      response: { 200: T.Array(tunnel) },
      headers: { 'X-Total-Count': 'Total number of tunnels.' },
    },
    handler({ params, query, services }) {
      return services.tunnels.list(params.uid, query);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/devices/:uid/tunnels',
    auth: ['user', 'apiKey'],
    role: 'operator',
    summary: 'Create an HTTP tunnel to host:port in the device network',
    description:
      'The tunnel answers at <address>.<GATEHOUSE_TUNNELS_DOMAIN> until ttl seconds have passed (-1: never).',
    tags: ['tunnels'],
    schema: {
      params: uidParams,
      body: T.Object({
        host: T.String({ anyOf: [{ format: 'ipv4' }, { format: 'ipv6' }], description: 'IP address.' }),
        port: T.Integer({ minimum: 1, maximum: 65535 }),
        ttl: T.Integer({ minimum: -1, maximum: 9_223_372_036, description: 'Seconds; -1 never expires.' }),
      }),
      response: { 200: tunnel },
    },
    handler({ params, body, services }) {
      return services.tunnels.create(params.uid, body);
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/devices/:uid/tunnels/:address',
    auth: ['user', 'apiKey'],
    role: 'operator',
    summary: 'Delete an HTTP tunnel',
    description: 'It stops answering at once; connections through it are closed.',
    tags: ['tunnels'],
    schema: {
      params: T.Object({ uid: deviceUid, address: T.String({ pattern: '^[0-9a-f]{32}$' }) }),
      response: { 200: T.Object({}) },
    },
    async handler({ params, services }) {
      await services.tunnels.delete(params.uid, params.address);
      services.tunnelProxy.closeAddress(params.address);
      return {};
    },
  }),
];
