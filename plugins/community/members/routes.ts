import { defineRoute } from '@gatehouse/core';
import { Type as T } from '@sinclair/typebox';
import { namespaceView, tenantParams } from '../namespaces/schemas';
import { email, userAuth } from '../users/schemas';

const grantable = T.Union([T.Literal('administrator'), T.Literal('operator'), T.Literal('observer')], {
  description: 'not above your own role; the owner role is never granted',
});
const memberParams = T.Object({
  tenant: tenantParams.properties.tenant,
  uid: T.String({ pattern: '^[0-9a-f]{24}$', description: 'user id of the member' }),
});

/**
 * Members. Invite, remove and change-role take a user token only, never an API key;
 * leave also accepts an API key.
 */
export const memberRoutes = [
  defineRoute({
    method: 'POST',
    path: '/api/namespaces/:tenant/members',
    auth: ['user'],
    role: 'administrator',
    summary: 'Add a member (community and enterprise: accepted at once)',
    tags: ['members'],
    schema: {
      params: tenantParams,
      body: T.Object({ email, role: grantable }),
      response: { 200: namespaceView, 403: null, 404: null, 409: null },
    },
    async handler({ caller, params, body, services }) {
      await services.members.add(caller, params.tenant, body.email, body.role);
      return services.namespaces.view(await services.namespaces.get(params.tenant));
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/namespaces/:tenant/members/:uid',
    auth: ['user'],
    role: 'administrator',
    summary: "Change a member's role",
    tags: ['members'],
    schema: { params: memberParams, body: T.Object({ role: grantable }), response: { 200: T.Object({}) } },
    async handler({ caller, params, body, services }) {
      await services.members.changeRole(caller, params.tenant, params.uid, body.role);
      return {};
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/namespaces/:tenant/members/:uid',
    auth: ['user'],
    role: 'administrator',
    summary: 'Remove a member',
    tags: ['members'],
    schema: { params: memberParams, response: { 200: namespaceView } },
    async handler({ caller, params, services }) {
      await services.members.remove(caller, params.tenant, params.uid);
      return services.namespaces.view(await services.namespaces.get(params.tenant));
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/namespaces/:tenant/members',
    auth: ['user', 'apiKey'],
    role: 'observer',
    summary: 'Leave a namespace',
    description:
      'Returns a new authentication that no longer includes the namespace. The owner cannot leave and must delete the namespace. An API key is not a member and answers 403.',
    tags: ['members'],
    schema: { params: tenantParams, response: { 200: userAuth } },
    async handler({ caller, params, services }) {
      return services.members.leave(caller, params.tenant);
    },
  }),
];
