import { defineRoute, pageQuery, type RouteDef, type RouteSchema } from '@gatehouse/core';
import { Type as T } from '@sinclair/typebox';
import {
  connector,
  connectorCreate,
  connectorToken,
  connectorUid,
  connectorUpdate,
  connectorWithToken,
  engineInfo,
} from './schemas';

const uidParams = T.Object({ uid: connectorUid });

const writeAnswer =
  '200 when the connector is connected and its engine answered, 201 when the connector was saved but its engine ' +
  'could not be reached through it (status.Message says which part failed).';

/** The connector calls (enterprise edition). */
export const connectorRoutes: RouteDef<RouteSchema>[] = [
  defineRoute({
    method: 'GET',
    path: '/api/connector',
    auth: ['user', 'apiKey'],
    role: 'observer',
    summary: 'List connectors',
    description:
      'Connectors to container engines of the namespace, newest first. The total is in X-Total-Count.',
    tags: ['connectors'],
    paged: true,
    schema: {
      query: T.Object({
        ...pageQuery,
        enable: T.Optional(T.Boolean({ description: 'Only enabled (true) or disabled (false) connectors.' })),
      }),
      response: { 200: T.Array(connector) },
    },
    handler: ({ query, services }) => services.connectors.list(query),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/connector',
    auth: ['user', 'apiKey'],
    role: 'administrator',
    summary: 'Create a connector',
    description:
      'Adds a connector for a Docker engine (or podman’s Docker-compatible API). The answer carries the ' +
      'connector’s token, once: run `gatehouse-agent connector --server-address <this server> --token <token>` ' +
      'beside the engine. That process dials out to Gatehouse and serves the engine it was started with; the ' +
      'server never connects to an address itself. Until it connects the answer is 201; while it is connected ' +
      'and the connector is enabled, each running container of its engine is a device under /api/containers.',
    tags: ['connectors'],
    schema: { body: connectorCreate, response: { 201: connectorWithToken } },
    async handler({ body, ctx, services }) {
      const made = await services.connectors.create(body);
      ctx.status = 201;
      return made;
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/connector/:uid',
    auth: ['user', 'apiKey'],
    role: 'observer',
    summary: 'Get a connector',
    tags: ['connectors'],
    schema: { params: uidParams, response: { 200: connector, 404: null } },
    async handler({ params, services }) {
      return services.connectors.get(params.uid);
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/connector/:uid',
    auth: ['user', 'apiKey'],
    role: 'administrator',
    summary: 'Update a connector',
    description: `Changes what is given and tries the engine again. ${writeAnswer}`,
    tags: ['connectors'],
    schema: {
      params: uidParams,
      body: connectorUpdate,
      response: { 200: connector, 201: connector, 404: null },
    },
    async handler({ params, body, ctx, services }) {
      const { connector, connected } = await services.connectors.update(params.uid, body);
      ctx.status = connected ? 200 : 201;
      return connector;
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/connector/:uid/token',
    auth: ['user', 'apiKey'],
    role: 'administrator',
    summary: 'Make a new connector token',
    description:
      'Replaces the connector’s token: the old one stops working at once, and a connector process connected with ' +
      'it is disconnected. The new token is answered once.',
    tags: ['connectors'],
    schema: {
      params: uidParams,
      response: { 200: T.Object({ token: connectorToken }), 404: null },
    },
    async handler({ params, services }) {
      return { token: await services.connectors.rotateToken(params.uid) };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/connector/:uid',
    auth: ['user', 'apiKey'],
    role: 'administrator',
    summary: 'Delete a connector',
    description:
      'Its containers stop being devices: pending ones go, accepted ones become removed (and keep their slot for ' +
      'the removal window, as any removed device). Its token stops working, and its process is disconnected.',
    tags: ['connectors'],
    schema: { params: uidParams, response: { 200: null, 404: null } },
    async handler({ params, services }) {
      await services.connectors.remove(params.uid);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/connector/:uid/info',
    auth: ['user', 'apiKey'],
    role: 'observer',
    summary: "The engine's information",
    description:
      "The container engine's own information object (GET /info of the Docker Engine API), through the " +
      'connector, as the engine answers it; 424 when the connector is not connected, its engine cannot be reached, ' +
      'or the answer is not shaped as an engine’s.',
    tags: ['connectors'],
    schema: { params: uidParams, response: { 200: engineInfo, 404: null, 424: null } },
    async handler({ params, services }) {
      return services.connectors.info(params.uid);
    },
  }),
];
