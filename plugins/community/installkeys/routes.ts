import { defineRoute, listQuery } from '@gatehouse/core';
import { Type as T } from '@sinclair/typebox';
import { installKey, installKeyWithKey, keyName } from './schemas';

const keyParams = T.Object({ id: T.String({ format: 'uuid', description: 'the install key id' }) });

/**
 * Install keys of the caller's namespace: what an agent presents with `install_key` when it registers a new device.
 * Managed by administrators and owners.
 */
export const installKeyRoutes = [
  defineRoute({
    method: 'POST',
    path: '/api/namespaces/install-keys',
    auth: ['user', 'apiKey'],
    role: 'administrator',
    summary: 'Create an install key (the key is in the answer once, as `key`)',
    description:
      'Kept as a SHA-256 digest only. A name the namespace already has answers 409 ["name"]; an expiry in the ' +
      'past 400 ["expires_at"].',
    tags: ['install-keys'],
    schema: {
      body: T.Object(
        {
          name: keyName,
          expires_at: T.Optional(
            T.Union([T.String({ format: 'date-time' }), T.Null()], { description: 'null or absent: never' }),
          ),
          usage_limit: T.Optional(
            T.Integer({
              minimum: 0,
              maximum: 1_000_000,
              description: 'how many devices may register with the key; 0 or absent: no limit',
            }),
          ),
        },
        { additionalProperties: false },
      ),
      response: { 200: installKeyWithKey, 409: null },
    },
    async handler({ body, services }) {
      return services.namespaceInstallKeys.create(body);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/namespaces/install-keys',
    auth: ['user', 'apiKey'],
    role: 'administrator',
    summary: "The namespace's install keys",
    tags: ['install-keys'],
    paged: true,
    schema: {
      query: listQuery({
        sortBy: ['created_at', 'name', 'expires_at', 'used_times', 'last_used_at'],
        filter: false,
      }),
      response: { 200: T.Array(installKey) },
      headers: { 'X-Total-Count': 'Number of keys in all pages.' },
    },
    handler({ query, services }) {
      return services.namespaceInstallKeys.list(query);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/namespaces/install-keys/:id/rotate',
    auth: ['user', 'apiKey'],
    role: 'administrator',
    summary: 'Give an install key a new secret (answered once, as `key`); the old one stops at once',
    description:
      'The key keeps its name, expiry, limit and count of uses. Devices registered with the old text stay ' +
      'registered.',
    tags: ['install-keys'],
    schema: { params: keyParams, response: { 200: installKeyWithKey, 404: null } },
    async handler({ params, services }) {
      return services.namespaceInstallKeys.rotate(params.id);
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/namespaces/install-keys/:id',
    auth: ['user', 'apiKey'],
    role: 'administrator',
    summary: 'Revoke an install key',
    description: 'It registers no more devices; the devices it registered stay.',
    tags: ['install-keys'],
    schema: { params: keyParams, response: { 200: T.Object({}), 404: null } },
    async handler({ params, services }) {
      await services.namespaceInstallKeys.revoke(params.id);
      return {};
    },
  }),
];
