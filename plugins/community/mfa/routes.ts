import { defineRoute, Unauthorized } from '@gatehouse/core';
import { Type as T } from '@sinclair/typebox';
import { requireLocalSignIn } from '../users/login';
import { userAuth } from '../users/schemas';
import { mfaSecret } from './schemas';

const code = T.String({ minLength: 6, maxLength: 10, description: 'the 6-digit code shown by the app' });
const recoveryCode = T.String({ minLength: 1, maxLength: 64 });
const identifier = T.String({ minLength: 1, maxLength: 255, description: 'username or e-mail' });

/** Multi-factor sign-in. */
export const mfaRoutes = [
  defineRoute({
    method: 'POST',
    path: '/api/user/mfa/auth',
    auth: ['none'],
    summary: 'Complete a sign-in with the code from the authenticator app',
    tags: ['mfa'],
    schema: {
      body: T.Object({ token: T.String({ description: 'the X-MFA-Token of the login answer' }), code }),
      response: { 200: userAuth, 401: null, 429: null },
    },
    async handler({ body, services, ctx }) {
      requireLocalSignIn(services.features);
      return services.mfa.authenticate(body.token, body.code, ctx.ip);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/user/mfa/recover',
    auth: ['none'],
    summary: 'Sign in with a recovery code',
    description:
      'The code is spent, but disables MFA for 10 more minutes; `X-Expires-At` gives the end of that window (unix time).',
    tags: ['mfa'],
    schema: {
      body: T.Object({ identifier, recovery_code: recoveryCode }),
      response: { 200: userAuth, 401: null, 429: null },
      headers: { 'X-Expires-At': 'Unix time until which the code may still disable MFA.' },
    },
    async handler({ body, services, ctx }) {
      requireLocalSignIn(services.features);
      const { auth, expiresAt } = await services.mfa.recover(body.identifier, body.recovery_code, ctx.ip);
      ctx.set('X-Expires-At', String(expiresAt));
      ctx.set('Access-Control-Expose-Headers', 'X-Expires-At');
      return auth;
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/user/mfa/reset',
    auth: ['none'],
    summary: 'E-mail MFA reset codes to the main and the recovery address',
    description:
      'Answers the same, and as fast, whether or not the account exists or has MFA on: the mail goes out after the answer. 503 for everyone when the server has no outgoing mail.',
    tags: ['mfa'],
    schema: { body: T.Object({ identifier }), response: { 200: T.Object({}), 503: null } },
    async handler({ body, services }) {
      await services.mfa.requestReset(body.identifier, services.config.publicUrl);
      return {};
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/api/user/mfa/reset/:id',
    auth: ['none'],
    summary: 'Turn MFA off with the two e-mailed reset codes',
    tags: ['mfa'],
    schema: {
      params: T.Object({ id: T.String({ pattern: '^[0-9a-f]{24}$', description: 'user id' }) }),
      body: T.Object({
        main_email_code: T.String({ minLength: 1, maxLength: 64 }),
        recovery_email_code: T.String({ minLength: 1, maxLength: 64 }),
      }),
      response: { 200: userAuth, 401: null, 429: null },
    },
    async handler({ params, body, services, ctx }) {
      requireLocalSignIn(services.features);
      return services.mfa.completeReset(params.id, body.main_email_code, body.recovery_email_code, ctx.ip);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/user/mfa/generate',
    auth: ['user'],
    summary: 'A new TOTP secret, its otpauth link and recovery codes',
    tags: ['mfa'],
    schema: {
      response: {
        200: mfaSecret,
      },
    },
    async handler({ caller, services }) {
      if (caller.kind !== 'user') throw new Unauthorized();
      return services.mfa.generate(caller.userId);
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/api/user/mfa/enable',
    auth: ['user'],
    summary: 'Turn MFA on with the generated secret and a code from the app',
    description: 'Needs a recovery e-mail (400 naming recovery_email); MFA already on answers 409.',
    tags: ['mfa'],
    schema: {
      body: T.Object({
        code,
        secret: T.String({ minLength: 16, maxLength: 128 }),
        recovery_codes: T.Array(recoveryCode, { minItems: 1, maxItems: 20 }),
      }),
      response: { 200: T.Object({}), 409: null },
    },
    async handler({ caller, body, services, ctx }) {
      if (caller.kind !== 'user') throw new Unauthorized();
      await services.mfa.enable(caller.userId, body, ctx.ip);
      return {};
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/api/user/mfa/disable',
    auth: ['user'],
    summary: 'Turn MFA off with a code or a recovery code',
    tags: ['mfa'],
    schema: {
      body: T.Object({ code: T.Optional(code), recovery_code: T.Optional(recoveryCode) }),
      response: { 200: T.Object({}) },
    },
    async handler({ caller, body, services, ctx }) {
      if (caller.kind !== 'user') throw new Unauthorized();
      await services.mfa.disable(caller.userId, body, ctx.ip);
      return {};
    },
  }),
];
