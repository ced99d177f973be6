import { defineRoute, pageQuery } from '@gatehouse/core';
import { Type as T } from '@sinclair/typebox';
import { apiKey, createdApiKey, keyName, role } from './schemas';

const keyParams = T.Object({ key: T.String({ minLength: 1, maxLength: 20, description: 'the key name' }) });

/** API keys. Only the list may be called with an API key; the others take a user token. */
export const apiKeyRoutes = [
  defineRoute({
    method: 'POST',
    path: '/api/namespaces/api-key',
    auth: ['user'],
    role: 'administrator',
    summary: 'Create an API key (the key is in the answer once, as `id`)',
    tags: ['api-keys'],
    secret: true,
    schema: {
      body: T.Object(
        {
          name: keyName,
          expires_in: T.Union([T.Literal(-1), T.Literal(30), T.Literal(60), T.Literal(90), T.Literal(365)], {
            description: 'days; -1 never expires',
          }),
          role: T.Optional(role),
        },
        { additionalProperties: false },
      ),
      response: { 200: createdApiKey, 409: null },
    },
    async handler({ body, services }) {
      return services.apiKeys.create(body);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/namespaces/api-key',
    auth: ['user', 'apiKey'],
    role: 'administrator',
    summary: "The namespace's API keys",
    tags: ['api-keys'],
    paged: true,
    schema: {
      query: T.Object(
        {
          ...pageQuery,
          sort_by: T.Union(
            ['expires_in', 'name', 'role', 'created_at', 'updated_at'].map((s) => T.Literal(s)),
            { default: 'expires_in' },
          ),
          order_by: T.Union([T.Literal('asc'), T.Literal('desc')], { default: 'desc' }),
        },
        { additionalProperties: true },
      ),
      response: { 200: T.Array(apiKey) },
      headers: { 'X-Total-Count': 'Number of keys in all pages.' },
    },
    handler({ query, services }) {
      return services.apiKeys.list(query);
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/namespaces/api-key/:key',
    auth: ['user'],
    role: 'administrator',
    summary: 'Rename an API key or change its role',
    tags: ['api-keys'],
    schema: {
      params: keyParams,
      body: T.Object({ name: T.Optional(keyName), role: T.Optional(role) }, { additionalProperties: false }),
      response: { 200: T.Object({}), 409: null },
    },
    async handler({ params, body, services }) {
      await services.apiKeys.update(params.key, body);
      return {};
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/namespaces/api-key/:key',
    auth: ['user'],
    role: 'administrator',
    summary: 'Delete an API key',
    tags: ['api-keys'],
    schema: { params: keyParams, response: { 200: T.Object({}) } },
    async handler({ params, services }) {
      await services.apiKeys.remove(params.key);
      return {};
    },
  }),
];
