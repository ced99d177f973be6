import { defineRoute } from '@gatehouse/core';
import { Type as T } from '@sinclair/typebox';

/** `GET /info`: what agents and the console learn about the instance. */
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
          plugins: T.Array(T.String(), {
            description: 'names of the running plugins, in load order (decides console modules)',
          }),
          console_modules: T.Array(
            T.Object({
              plugin: T.String(),
              url: T.String({
                description: 'the ES module the console imports; its default export fills slots',
              }),
            }),
            { description: 'console modules of the running plugins, in load order' },
          ),
        }),
      },
    },
    async handler({ ctx, services }) {
      const { instance, features } = services;
      const host = ctx.hostname || 'localhost';
      return {
        version: instance.version,
        endpoints: { ssh: `${host}:${instance.sshPort}`, api: `${host}:${instance.httpPort}` },
        setup: await services.users.any(),
        authentication: { ...features.authentication },
        // The manifests' names, not the config's entries: an outside plugin may be listed by package name or path.
        plugins: [...instance.plugins],
        console_modules: [...instance.consoleModules],
      };
    },
  }),
];
