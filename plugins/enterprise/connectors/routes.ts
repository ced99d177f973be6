import { defineRoute, pageQuery, type RouteDef, type RouteSchema } from '@gatehouse/core';
import { Type as T } from '@sinclair/typebox';
import { connector, connectorCreate, connectorUid, connectorUpdate, engineInfo } from './schemas';

const uidParams = T.Object({ uid: connectorUid });

const writeAnswer =
  '200 when Gatehouse connected to the engine, 201 when the connector was saved but the engine could not be ' +
  'reached (status.Message says why; the connector keeps trying while enabled).';

/** The connector calls of SPEC.md section 7 (enterprise edition). */
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
      `Adds a Docker Engine API endpoint (or podman's Docker-compatible one) at address:port, with TLS when ` +
      `secure. ${writeAnswer} While enabled, each running container of the engine is a device under ` +
      '/api/containers.',
    tags: ['connectors'],
    schema: { body: connectorCreate, response: { 200: connector, 201: connector } },
    async handler({ body, ctx, services }) {
      const { connector, connected } = await services.connectors.create(body);
      ctx.status = connected ? 200 : 201;
      return connector;
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
    method: 'DELETE',
    path: '/api/connector/:uid',
    auth: ['user', 'apiKey'],
    role: 'administrator',
    summary: 'Delete a connector',
    description:
      'Its containers stop being devices: pending ones go, accepted ones become removed (and keep their slot for ' +
      'the removal window, as any removed device).',
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
      "The container engine's own information object (GET /info of the Docker Engine API), as it answers; 424 " +
      'when the engine cannot be reached.',
    tags: ['connectors'],
    schema: { params: uidParams, response: { 200: engineInfo, 404: null, 424: null } },
    async handler({ params, services }) {
      return services.connectors.info(params.uid);
    },
  }),
];
