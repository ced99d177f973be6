import { defineRoute } from '@gatehouse/core';
import { Type as T } from '@sinclair/typebox';
import { tag } from '../devices/schemas';

const tagParams = T.Object({ tag });

/** Tags across the namespace (SPEC.md section 7, "Tags"). */
export const tagRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/tags',
    auth: ['user', 'apiKey'],
    role: 'observer',
    summary: 'List the tags used in the namespace',
    tags: ['tags'],
    schema: { response: { 200: T.Array(T.String()) } },
    async handler({ services, tenantId }) {
      return services.tags.list(tenantId());
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/api/tags/:tag',
    auth: ['user', 'apiKey'],
    role: 'operator',
    summary: 'Rename a tag everywhere in the namespace',
    description: '404 when no device uses the tag; 409 ["tag"] when the new name is already used.',
    tags: ['tags'],
    schema: { params: tagParams, body: T.Object({ tag }), response: { 200: T.Object({}), 409: null } },
    async handler({ params, body, services, tenantId }) {
      await services.tags.rename(tenantId(), params.tag, body.tag);
      return {};
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/tags/:tag',
    auth: ['user', 'apiKey'],
    role: 'operator',
    summary: 'Delete a tag everywhere in the namespace',
    tags: ['tags'],
    schema: { params: tagParams, response: { 200: T.Object({}) } },
    async handler({ params, services, tenantId }) {
      await services.tags.delete(tenantId(), params.tag);
      return {};
    },
  }),
];
