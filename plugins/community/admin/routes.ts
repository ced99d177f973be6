import { defineRoute, Invalid, pageQuery } from '@gatehouse/core';
import { Type as T } from '@sinclair/typebox';
import { namespaceName } from '../namespaces/schemas';
import { setupUrl } from '../setup/signature';
import { email, name, password, username } from '../users/schemas';
import { adminNamespace, adminUser, health } from './schemas';

/**
 * Instance administration: for instance administrators (a flag on the user: the setup user, and whoever
 * an administrator or the CLI names) and for the operator's `gatehouse` command on the data directory's local
 * socket. Users and namespaces across every tenant, and the server's health.
 */
const auth: ['user', 'local'] = ['user', 'local'];
const tags = ['instance'];

const listQuery = T.Object(
  {
    ...pageQuery,
    search: T.Optional(
      T.String({ maxLength: 255, description: 'part of a username, e-mail or namespace name' }),
    ),
  },
  { additionalProperties: true },
);
const userParams = T.Object({
  user: T.String({ minLength: 1, maxLength: 255, description: 'user id, username or e-mail' }),
});
const namespaceParams = T.Object({
  namespace: T.String({ minLength: 1, maxLength: 64, description: 'tenant id or namespace name' }),
});
const total = { 'X-Total-Count': 'Number of items in all pages.' };

export const adminRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/admin/users',
    auth,
    instanceAdmin: true,
    summary: 'Every user of the instance',
    tags,
    paged: true,
    schema: { query: listQuery, response: { 200: T.Array(adminUser) }, headers: total },
    handler: ({ query, services }) => services.admin.listUsers(query),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/admin/users',
    auth,
    instanceAdmin: true,
    summary: 'Create a user',
    description: 'A taken username or e-mail answers 409 with those field names.',
    tags,
    schema: {
      body: T.Object({
        name: T.Optional(name),
        username,
        email,
        password,
        admin: T.Optional(T.Boolean({ description: 'make the user an instance administrator' })),
      }),
      response: { 200: adminUser, 409: null },
    },
    handler: ({ body, caller, services }) => services.admin.createUser(caller, body),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/admin/users/:user',
    auth,
    instanceAdmin: true,
    summary: 'A user of the instance',
    tags,
    schema: { params: userParams, response: { 200: adminUser } },
    async handler({ params, services }) {
      return services.admin.userView((await services.admin.findUser(params.user)).id);
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/admin/users/:user',
    auth,
    instanceAdmin: true,
    summary: 'Grant or revoke instance administration, disable or enable an account',
    description:
      'A disabled account cannot sign in, and its tokens and the API keys it created stop working at once. ' +
      'Nobody revokes or disables their own account, nor the last enabled administrator (403).',
    tags,
    schema: {
      params: userParams,
      body: T.Object({ admin: T.Optional(T.Boolean()), disabled: T.Optional(T.Boolean()) }),
      response: { 200: adminUser },
    },
    handler: ({ params, body, caller, services }) => services.admin.updateUser(caller, params.user, body),
  }),
  defineRoute({
    method: 'PUT',
    path: '/api/admin/users/:user/password',
    auth,
    instanceAdmin: true,
    summary: "Set a user's password",
    description: 'Signs the user out everywhere: tokens issued before the change stop working.',
    tags,
    schema: { params: userParams, body: T.Object({ password }), response: { 200: adminUser } },
    handler: ({ params, body, caller, services }) =>
      services.admin.setPassword(caller, params.user, body.password),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/admin/namespaces',
    auth,
    instanceAdmin: true,
    summary: 'Every namespace of the instance',
    tags,
    paged: true,
    schema: { query: listQuery, response: { 200: T.Array(adminNamespace) }, headers: total },
    handler: ({ query, services }) => services.admin.listNamespaces(query),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/admin/namespaces',
    auth,
    instanceAdmin: true,
    summary: 'Create a namespace owned by a user',
    description: "Within the owner's `max_namespaces` (403 beyond). A taken name answers 409 `['name']`.",
    tags,
    schema: {
      body: T.Object({
        name: namespaceName,
        owner: T.String({ minLength: 1, maxLength: 255, description: 'user id, username or e-mail' }),
      }),
      response: { 200: adminNamespace, 409: null },
    },
    handler: ({ body, caller, services }) => services.admin.createNamespace(caller, body.name, body.owner),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/admin/namespaces/:namespace',
    auth,
    instanceAdmin: true,
    summary: 'Set the device limit of a namespace',
    tags,
    schema: {
      params: namespaceParams,
      body: T.Object({
        max_devices: T.Integer({
          minimum: -1,
          maximum: 1_000_000,
          description: '-1 unlimited, otherwise at least 3',
        }),
      }),
      response: { 200: adminNamespace },
    },
    handler({ params, body, caller, services }) {
      if (body.max_devices !== -1 && body.max_devices < 3) throw new Invalid(['max_devices']);
      return services.admin.setMaxDevices(caller, params.namespace, body.max_devices);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/admin/namespaces/:namespace/members',
    auth,
    instanceAdmin: true,
    summary: 'Add a user to a namespace with a role',
    tags,
    schema: {
      params: namespaceParams,
      body: T.Object({
        user: T.String({ minLength: 1, maxLength: 255, description: 'user id, username or e-mail' }),
        role: T.Union([T.Literal('administrator'), T.Literal('operator'), T.Literal('observer')]),
      }),
      response: { 200: adminNamespace, 409: null },
    },
    handler: ({ params, body, caller, services }) =>
      services.admin.addMember(caller, params.namespace, body.user, body.role),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/admin/health',
    auth,
    instanceAdmin: true,
    summary: "The server's health: version, uptime, store, cache and counts",
    tags,
    schema: {
      response: {
        200: health,
      },
    },
    handler: ({ services }) => services.admin.health(),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/admin/setup-link',
    auth,
    instanceAdmin: true,
    summary: 'The first-run setup link (what `gatehouse setup-url` prints)',
    tags,
    // The link's signature lets whoever holds it create the first account.
    secret: true,
    schema: { response: { 200: T.Object({ url: T.String(), done: T.Boolean() }) } },
    async handler({ services }) {
      return {
        url: setupUrl(services.config.publicUrl, services.keys),
        done: await services.users.any(),
      };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/admin/secrets/rotate',
    // The key never leaves the server: the call only makes the server write a new one and re-encrypt.
    auth,
    instanceAdmin: true,
    summary: 'Encrypt every secret in the store with a new key (what `gatehouse secrets rotate` does)',
    description:
      'With a key file, generates a new key into it, re-encrypts the MFA secrets and private keys with it and drops the old key. With GATEHOUSE_SECRET_KEY, re-encrypts with the first key listed there.',
    tags,
    schema: {
      response: {
        200: T.Object({
          from: T.Array(T.String(), { description: 'ids of the keys used before' }),
          to: T.String({ description: 'id of the key that encrypts now' }),
          resealed: T.Integer({ description: 'values encrypted again' }),
        }),
      },
    },
    async handler({ services }) {
      return services.secrets.rotate(services.db, services.instance.sealedColumns);
    },
  }),
];
