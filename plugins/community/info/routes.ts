import { defineRoute, version } from '@gatehouse/core';
import { Type as T } from '@sinclair/typebox';

/** `GET /info` (SPEC.md section 7): what agents and the console learn about the instance. */
export const infoRoutes = [
  defineRoute({
    method: 'GET',
    path: '/info',
    auth: ['none'],
    summary: 'Instance information',
    tags: ['instance'],
    schema: {
      query: T.Object(
        { agent_version: T.Optional(T.String({ maxLength: 64 })) },
        { additionalProperties: true },
      ),
      response: {
        200: T.Object({
          version: T.String(),
          endpoints: T.Object({ ssh: T.String(), api: T.String() }),
          setup: T.Boolean({ description: 'true once the first user exists' }),
          authentication: T.Object({ local: T.Boolean(), saml: T.Boolean() }),
          plugins: T.Array(T.String(), { description: 'plugins of this edition (decides console modules)' }),
        }),
      },
    },
    async handler({ ctx, services }) {
      const { kernel, features, config } = services;
      const host = ctx.hostname || 'localhost';
      return {
        version,
        endpoints: { ssh: `${host}:${kernel.sshPort}`, api: `${host}:${kernel.httpPort}` },
        setup: await services.users.any(),
        authentication: { ...features.authentication },
        plugins: [...config.plugins],
      };
    },
  }),
];
