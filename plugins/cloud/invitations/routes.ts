import { defineRoute } from '@gatehouse/core';
import { email, tenantParams } from '@gatehouse/plugin-community';
import { Type as T } from '@sinclair/typebox';
import { mailedToken } from '../accounts/routes';
import { grantable, invitation, memberId } from './schemas';

const tags = ['members'];
/** Cloud invitations. */
export const invitationRoutes = [
  defineRoute({
    method: 'POST',
    path: '/api/namespaces/:tenant/members/invites',
    auth: ['user'],
    role: 'administrator',
    summary: 'Invite someone by e-mail',
    // The answered link's signature accepts the invitation.
    secret: true,
    description:
      'Mails a link to accept and answers it. The member is pending, without access, until accepted; the link is valid 7 days, and inviting again after it expired sends a new one (409 while one is still valid). An address without an account is invited too: its link leads to sign-up.',
    tags,
    schema: {
      params: tenantParams,
      body: T.Object({ email, role: grantable }),
      response: {
        200: T.Object({ link: T.String() }),
        403: null,
        404: null,
        409: null,
        429: null,
        503: null,
      },
    },
    async handler({ caller, params, body, services }) {
      return services.invitations.invite(caller, params.tenant, body.email, body.role);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/namespaces/:tenant/members/invites',
    auth: ['user'],
    role: 'administrator',
    summary: 'List the invitations not accepted yet',
    tags,
    schema: { params: tenantParams, response: { 200: T.Array(invitation) } },
    async handler({ caller, params, services }) {
      return services.invitations.list(caller, params.tenant);
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/namespaces/:tenant/members/invites/:id',
    auth: ['user'],
    role: 'administrator',
    summary: 'Withdraw an invitation not accepted yet',
    tags,
    schema: {
      params: T.Object({ tenant: tenantParams.properties.tenant, id: memberId }),
      response: { 200: T.Object({}), 404: null },
    },
    async handler({ caller, params, services }) {
      await services.invitations.cancel(caller, params.tenant, params.id);
      return {};
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/namespaces/:tenant/members/accept-invite',
    auth: ['user'],
    summary: 'Accept an invitation',
    description:
      "With the link's `sig`, signed in as the invited address. The signature works once and for 7 days.",
    tags,
    schema: {
      params: tenantParams,
      body: T.Object({ sig: mailedToken }),
      response: { 200: T.Object({}), 403: null, 404: null, 409: null },
    },
    async handler({ caller, params, body, services }) {
      await services.invitations.accept(caller, params.tenant, body.sig);
      return {};
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/namespaces/:tenant/members/:id/accept-invite',
    auth: ['none'],
    summary: 'The status of an invitation',
    description:
      "What the accept-invite page shows, for the holder of the link's `sig`: pending, accepted or expired, and whether an account has the address. 404 for any other signature.",
    tags,
    schema: {
      params: T.Object({ tenant: tenantParams.properties.tenant, id: memberId }),
      query: T.Object({ sig: mailedToken }),
      response: { 200: invitation, 404: null },
    },
    async handler({ params, query, services }) {
      return services.invitations.status(params.tenant, params.id, query.sig);
    },
  }),
];
