import { defineRoute, Unauthorized } from '@gatehouse/core';
import { email, name, password, username } from '@gatehouse/plugin-community';
import { Type as T } from '@sinclair/typebox';
import { deletionPreview } from './schemas';

/** The registration password is up to 64 characters of letters, digits, underscore and hyphen. */
export const registrationPassword = T.String({
  minLength: 5,
  maxLength: 64,
  pattern: '^[A-Za-z0-9_-]+$',
  description: '5 to 64 characters: letters, digits, underscore and hyphen',
});
/** A mailed one-time token or invitation signature (43 characters of base64url as Gatehouse makes them). */
export const mailedToken = T.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_-]+$' });
const identifier = T.String({ minLength: 1, maxLength: 255, description: 'a username or an e-mail address' });
const done = T.Object({});
const tags = ['accounts'];
const mailAnswers = { 200: done, 429: null, 503: null };

/** Cloud accounts. */
export const accountRoutes = [
  defineRoute({
    method: 'POST',
    path: '/api/register',
    auth: ['none'],
    summary: 'Sign up',
    description:
      'Creates an account and mails a link that verifies its address; it cannot sign in before. With `sig` (the signature of an invitation link sent to the same address) the address counts as verified and the account joins the inviting namespace at once. 409 names `username` and/or `email` when taken; an account whose address was not verified within 24 hours of its sign-up holds neither, and goes when a new sign-up names them.',
    tags,
    schema: {
      body: T.Object({
        name,
        email,
        username,
        password: registrationPassword,
        email_marketing: T.Optional(T.Boolean({ description: 'agrees to receive product news' })),
        sig: T.Optional(mailedToken),
      }),
      response: { ...mailAnswers, 400: null, 409: null },
    },
    async handler({ body, services, ctx }) {
      await services.accounts.register(body, ctx.ip);
      return {};
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/user/validation_account',
    auth: ['none'],
    summary: 'Verify an e-mail address with the mailed token',
    description: 'A link works once, within 24 hours. Any failure answers 400 naming `token`.',
    tags,
    schema: {
      query: T.Object({ email, token: mailedToken }),
      response: { 200: done, 400: null },
    },
    async handler({ query, services }) {
      await services.accounts.verify(query.email, query.token);
      return {};
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/user/resend_email',
    auth: ['none'],
    summary: 'Mail the verification link again',
    description:
      'Answers alike whether or not the account exists or is already verified; the message goes out only to an account not verified yet.',
    tags,
    schema: { body: T.Object({ username: identifier }), response: mailAnswers },
    async handler({ body, services, ctx }) {
      await services.accounts.resendVerification(body.username, ctx.ip);
      return {};
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/user/recover_password',
    auth: ['none'],
    summary: 'Mail a link to choose a new password',
    description:
      'By username or e-mail. Answers alike whether or not the account exists; the link works once, within an hour.',
    tags,
    schema: { body: T.Object({ username: identifier }), response: mailAnswers },
    async handler({ body, services, ctx }) {
      await services.accounts.recoverPassword(body.username, ctx.ip);
      return {};
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/user/:uid/update_password',
    auth: ['none'],
    summary: 'Choose a new password with the mailed token',
    description:
      'Signs out every older session. Any failure of the token answers 400 naming `token`, whether or not the user exists.',
    tags,
    schema: {
      params: T.Object({ uid: T.String({ pattern: '^[0-9a-f]{24}$', description: 'user id' }) }),
      body: T.Object({ password, token: mailedToken }),
      response: { 200: done, 400: null, 429: null },
    },
    async handler({ params, body, services, ctx }) {
      await services.accounts.updatePassword(params.uid, body.token, body.password, ctx.ip);
      return {};
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/user/deletion',
    auth: ['user'],
    summary: 'What deleting your account would take with it',
    description:
      'The namespaces the account owns (deleted with their devices, sessions and keys; their other members lose access; a running subscription is canceled), the memberships that end, and what `DELETE /api/user` asks for: the password (not after a single sign-on within the last 5 minutes) and, with two-step verification on, a current code.',
    tags,
    schema: {
      response: {
        200: deletionPreview,
      },
    },
    async handler({ caller, services }) {
      if (caller.kind !== 'user') throw new Unauthorized();
      return services.accounts.deletionPreview(caller);
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/user',
    auth: ['user'],
    status: 204,
    summary: 'Delete your account',
    description:
      'Deletes the account, the namespaces it owns with everything in them, and its memberships elsewhere; every sign-in of it ends. ' +
      '`namespaces` names the tenant ids of the owned namespaces, as `GET /api/user/deletion` lists them: what you agree goes (409 naming `namespaces` when they differ, e.g. one was made since). ' +
      'The person confirms: `password` (403 when wrong; repeated wrong ones lock out as at sign-in, 429), or, for a sign-in made through single sign-on within the last 5 minutes, nothing; and `code`, a current code of the authenticator app, when two-step verification is on (400 naming `code`). ' +
      'Refused while billing of an owned namespace is not settled (402), and for the last instance administrator (403).',
    tags,
    schema: {
      body: T.Object(
        {
          namespaces: T.Array(T.String({ format: 'uuid' }), {
            maxItems: 1000,
            description: 'tenant ids of the namespaces you own, which go with the account ([] when none)',
          }),
          password: T.Optional(T.String({ minLength: 1, maxLength: 255 })),
          code: T.Optional(
            T.String({ minLength: 1, maxLength: 16, description: 'a current code of the authenticator app' }),
          ),
        },
        { additionalProperties: false },
      ),
      response: { 204: null, 400: null, 402: null, 403: null, 409: null, 429: null },
    },
    async handler({ caller, body, services, ctx }) {
      if (caller.kind !== 'user') throw new Unauthorized();
      await services.accounts.deleteAccount(caller, body, ctx.ip);
      ctx.status = 204;
    },
  }),
];
