import { defineRoute, Forbidden, pageQuery } from '@gatehouse/core';
import { Type as T } from '@sinclair/typebox';
import { namespaceName, namespaceSettings, namespaceView, tenantParams } from './schemas';

/** Namespaces. The role is checked in the namespace the path names. */
export const namespaceRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/namespaces',
    auth: ['user', 'apiKey'],
    summary: 'Namespaces you belong to (an API key: its own)',
    tags: ['namespaces'],
    paged: true,
    schema: {
      query: T.Object(pageQuery, { additionalProperties: true }),
      response: { 200: T.Array(namespaceView) },
      headers: { 'X-Total-Count': 'Number of namespaces in all pages.' },
    },
    handler: ({ caller, query, services }) => services.namespaces.list(caller, query),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/namespaces',
    auth: ['user'],
    summary: 'Create a namespace you own',
    description:
      "Within your `max_namespaces` (0 none, -1 unlimited; 403 beyond). A taken name answers 409 `['name']`.",
    tags: ['namespaces'],
    schema: {
      body: T.Object({ name: namespaceName }),
      response: { 200: namespaceView, 403: null, 409: null },
    },
    async handler({ caller, body, services }) {
      if (caller.kind !== 'user') throw new Forbidden();
      const ns = await services.db.transaction((trx) =>
        services.namespaces.create(body.name, caller.userId, trx),
      );
      return services.namespaces.view(ns);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/namespaces/:tenant',
    auth: ['user', 'apiKey'],
    role: 'observer',
    summary: 'A namespace with its members and settings',
    tags: ['namespaces'],
    schema: { params: tenantParams, response: { 200: namespaceView } },
    async handler({ caller, params, services }) {
      await services.namespaces.roleIn(caller, params.tenant);
      return services.namespaces.view(await services.namespaces.get(params.tenant));
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/api/namespaces/:tenant',
    auth: ['user', 'apiKey'],
    role: 'administrator',
    summary: 'Rename a namespace or change its settings',
    tags: ['namespaces'],
    schema: {
      params: tenantParams,
      body: T.Object(
        { name: T.Optional(namespaceName), settings: T.Optional(namespaceSettings) },
        { additionalProperties: false },
      ),
      response: { 200: namespaceView, 409: null },
    },
    async handler({ caller, params, body, services }) {
      await services.namespaces.roleIn(caller, params.tenant, 'administrator');
      return services.namespaces.view(await services.namespaces.update(params.tenant, body));
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/namespaces/:tenant',
    auth: ['user', 'apiKey'],
    role: 'owner',
    summary: 'Delete a namespace and everything in it',
    tags: ['namespaces'],
    schema: { params: tenantParams, response: { 200: T.Object({}) } },
    async handler({ caller, params, services }) {
      await services.namespaces.roleIn(caller, params.tenant, 'owner');
      await services.namespaces.remove(params.tenant);
      return {};
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/namespaces/:tenant/support',
    auth: ['user', 'apiKey'],
    role: 'administrator',
    summary: 'The support identifier of a namespace',
    tags: ['namespaces'],
    schema: {
      params: tenantParams,
      response: { 200: T.Object({ identifier: T.String({ pattern: '^[0-9a-f]{64}$' }) }) },
    },
    async handler({ caller, params, services }) {
      await services.namespaces.roleIn(caller, params.tenant, 'administrator');
      return { identifier: services.namespaces.supportIdentifier(params.tenant) };
    },
  }),
];
