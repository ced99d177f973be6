import { defineRoute, type PermissionRow, roles } from '@gatehouse/core';
import { type Static, Type as T } from '@sinclair/typebox';

/** A member call whose role is checked, as `GET /info` lists it for the console. */
const memberPermission = T.Object({
  method: T.String(),
  path: T.String({ description: 'OpenAPI-style path, e.g. /api/devices/{uid}' }),
  summary: T.String(),
  role: T.Union(
    roles.map((r) => T.Literal(r)),
    { description: 'the least member role the call needs' },
  ),
});

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
          permissions: T.Array(memberPermission, {
            description:
              'the calls a member makes that need a role, from the table the server checks: the console hides ' +
              'or disables what the signed-in role cannot do',
          }),
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
        permissions: memberPermissions(instance.permissions),
      };
    },
  }),
];

/** The rows of the permission matrix a member's role decides: user calls with a least role. */
function memberPermissions(rows: readonly PermissionRow[]): Static<typeof memberPermission>[] {
  return rows.flatMap((r) =>
    r.role && r.callers.user && !r.instanceAdmin
      ? [{ method: r.method, path: r.path, summary: r.summary, role: r.role }]
      : [],
  );
}
