import { defineRoute, Unauthorized } from '@gatehouse/core';
import { Type as T } from '@sinclair/typebox';
import { userAuth } from './schemas';

const credentials = T.Object({
  username: T.String({ minLength: 1, maxLength: 255, description: 'username or e-mail' }),
  password: T.String({ minLength: 1, maxLength: 255 }),
});

/** Local sign-in and the current user (SPEC.md section 7, "Authentication and user"). */
export const userRoutes = [
  defineRoute({
    method: 'POST',
    path: '/api/login',
    auth: ['none'],
    summary: 'Sign in with username or e-mail and password',
    tags: ['users'],
    schema: { body: credentials, response: { 200: userAuth } },
    async handler({ body, services }) {
      return services.logins.login(body.username, body.password);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/auth/user',
    auth: ['none'],
    summary: 'Sign in (alias of /api/login)',
    tags: ['users'],
    schema: { body: credentials, response: { 200: userAuth } },
    async handler({ body, services }) {
      return services.logins.login(body.username, body.password);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/auth/user',
    auth: ['user'],
    summary: 'The signed-in user, with a fresh token',
    tags: ['users'],
    schema: { response: { 200: userAuth } },
    async handler({ caller, services }) {
      if (caller.kind !== 'user') throw new Unauthorized();
      return services.users.authResult(await services.users.get(caller.userId), caller.tenantId);
    },
  }),
];
