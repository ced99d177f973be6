import { Type as T } from '@sinclair/typebox';

/** Field rules of users: username, name, e-mail, password. */
export const username = T.String({ minLength: 3, maxLength: 30, pattern: '^[A-Za-z0-9_.@-]+$' });
export const password = T.String({ minLength: 5, maxLength: 30 });
export const name = T.String({ minLength: 3, maxLength: 20 });
export const email = T.String({ format: 'email', maxLength: 255 });

/** The User authentication result of a sign-in. */
export const userAuth = T.Object({
  token: T.String(),
  id: T.String({ pattern: '^[0-9a-f]{24}$' }),
  origin: T.Union([T.Literal('local'), T.Literal('saml')], {
    description:
      'local: the account has a password; saml: it was made by single sign-on (enterprise edition)',
  }),
  user: T.String({ description: 'username' }),
  name: T.String(),
  email: T.String(),
  recovery_email: T.String(),
  tenant: T.String({ description: 'namespace the token is scoped to; empty when none' }),
  role: T.String({ description: 'role in that namespace; empty when none' }),
  mfa: T.Boolean(),
  max_namespaces: T.Integer({ description: '0 none allowed, -1 unlimited' }),
  admin: T.Boolean({ description: 'an instance administrator (the Instance area and /api/admin calls)' }),
});
