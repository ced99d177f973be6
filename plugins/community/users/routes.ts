import { defineRoute, Forbidden, type RouteRequest, type RouteSchema, Unauthorized } from '@gatehouse/core';
import { Type as T } from '@sinclair/typebox';
import { email, name, password, userAuth, username } from './schemas';

const credentials = T.Object({
  username: T.String({ minLength: 1, maxLength: 255, description: 'username or e-mail' }),
  password: T.String({ minLength: 1, maxLength: 255 }),
});

const loginHeaders = {
  'X-Account-Lockout': 'Unix time the lockout of this source and user ends; 0 when none (401 and 429).',
  'X-MFA-Token': 'With 401 when the user has MFA on: complete the sign-in at POST /api/user/mfa/auth.',
};

const tenantParams = T.Object({
  tenant: T.String({ format: 'uuid', description: 'tenant id of a namespace' }),
});

const userChanges = T.Object(
  {
    name: T.Optional(name),
    username: T.Optional(username),
    email: T.Optional(email),
    recovery_email: T.Optional(
      T.Union([email, T.Literal('')], { description: 'cannot be cleared once set' }),
    ),
    password: T.Optional(password),
    current_password: T.Optional(T.String({ maxLength: 255 })),
  },
  { additionalProperties: false },
);

function userOf(caller: RouteRequest<RouteSchema>['caller']) {
  if (caller.kind !== 'user') throw new Unauthorized();
  return caller;
}

async function switchNamespace({ caller, params, services }: RouteRequest<{ params: typeof tenantParams }>) {
  const me = userOf(caller);
  const role = await services.users.membership(me.userId, params.tenant);
  if (!role) throw new Forbidden('you are not a member of this namespace');
  await services.users.setPreferredNamespace(me.userId, params.tenant);
  return services.users.authResult(await services.users.get(me.userId), params.tenant, me.signIn);
}

/** Local sign-in, the current user, namespace switch and profile changes. */
export const userRoutes = [
  defineRoute({
    method: 'POST',
    path: '/api/login',
    auth: ['none'],
    summary: 'Sign in with username or e-mail and password',
    description:
      'Answers 401 with `X-MFA-Token` when the user has MFA on, and 429 with `X-Account-Lockout` after repeated failures from one source.',
    tags: ['users'],
    schema: {
      body: credentials,
      response: { 200: userAuth, 401: null, 429: null },
      headers: loginHeaders,
    },
    async handler({ body, services, ctx }) {
      return services.logins.login(body.username, body.password, ctx.ip);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/auth/user',
    auth: ['none'],
    summary: 'Sign in (alias of /api/login)',
    tags: ['users'],
    schema: {
      body: credentials,
      response: { 200: userAuth, 401: null, 429: null },
      headers: loginHeaders,
    },
    async handler({ body, services, ctx }) {
      return services.logins.login(body.username, body.password, ctx.ip);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/auth/user',
    auth: ['user'],
    summary: 'The signed-in user, with a fresh token',
    description: 'The fresh token belongs to the same sign-in: signing out ends it too.',
    tags: ['users'],
    schema: { response: { 200: userAuth } },
    async handler({ caller, services }) {
      const me = userOf(caller);
      return services.users.authResult(await services.users.get(me.userId), me.tenantId, me.signIn);
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/auth/user',
    auth: ['user'],
    status: 204,
    summary: 'Sign out: end the sign-in of this token',
    description:
      'Every token of this sign-in (this one, and those it was switched to another namespace or refreshed into) is refused from then on, by every instance of the installation, and the web terminals opened with it close. Other sign-ins of the same user go on. Calling it again with the same token answers 401.',
    tags: ['users'],
    schema: { response: { 204: null } },
    async handler({ caller, services, ctx }) {
      await services.users.endSignIn(userOf(caller));
      ctx.status = 204;
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/auth/token/:tenant',
    auth: ['user'],
    summary: 'Switch namespace: a new token scoped to that namespace',
    tags: ['users'],
    schema: { params: tenantParams, response: { 200: userAuth } },
    handler: switchNamespace,
  }),
  defineRoute({
    method: 'GET',
    path: '/api/token/:tenant',
    auth: ['user'],
    summary: 'Switch namespace (alias of /api/auth/token/{tenant})',
    tags: ['users'],
    schema: { params: tenantParams, response: { 200: userAuth } },
    handler: switchNamespace,
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/users',
    auth: ['user'],
    summary: 'Change your name, username, e-mail, recovery e-mail or password',
    description:
      'Conflicting username or e-mail answer 409 with those field names. The recovery e-mail must differ from the e-mail and cannot be cleared once set. A new password needs `current_password` and signs out every older token; the answer carries a fresh one.',
    tags: ['users'],
    schema: { body: userChanges, response: { 200: userAuth, 409: null } },
    async handler({ caller, body, services }) {
      const me = userOf(caller);
      const updated = await services.users.update(me.userId, body);
      return services.users.authResult(updated, me.tenantId, me.signIn);
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/users/:id/data',
    auth: ['user'],
    summary: 'Change your profile (deprecated: use PATCH /api/users)',
    tags: ['users'],
    deprecated: true,
    schema: {
      params: T.Object({ id: T.String({ pattern: '^[0-9a-f]{24}$' }) }),
      body: T.Object(
        {
          name: T.Optional(name),
          username: T.Optional(username),
          email: T.Optional(email),
          recovery_email: T.Optional(T.Union([email, T.Literal('')])),
        },
        { additionalProperties: false },
      ),
      response: { 200: T.Object({}), 409: null },
    },
    async handler({ caller, params, body, services }) {
      const me = userOf(caller);
      if (params.id !== me.userId) throw new Forbidden('you can only change your own profile');
      await services.users.update(me.userId, body);
      return {};
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/users/:id/password',
    auth: ['user'],
    summary: 'Change your password (deprecated: use PATCH /api/users)',
    tags: ['users'],
    deprecated: true,
    schema: {
      params: T.Object({ id: T.String({ pattern: '^[0-9a-f]{24}$' }) }),
      body: T.Object({ current_password: T.String({ maxLength: 255 }), new_password: password }),
      response: { 200: T.Object({}) },
    },
    async handler({ caller, params, body, services }) {
      const me = userOf(caller);
      if (params.id !== me.userId) throw new Forbidden('you can only change your own password');
      await services.users.update(me.userId, {
        password: body.new_password,
        current_password: body.current_password,
      });
      return {};
    },
  }),
];
