import { defineRoute, NotImplemented } from '@gatehouse/core';
import { Type as T } from '@sinclair/typebox';

/**
 * A SAML identity provider, registered in the container as `saml` by the enterprise plugin when SAML is configured.
 * Community only owns the call and its 501 answer (SPEC.md section 6).
 */
export interface SamlProvider {
  /** The identity provider's sign-in URL for a new authentication request. */
  authUrl(): Promise<string>;
}

declare module '@gatehouse/core/cradle' {
  interface Cradle {
    saml?: SamlProvider;
  }
}

export const samlRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/user/saml/auth',
    auth: ['none'],
    summary: 'Start a SAML sign-in (enterprise edition)',
    description: 'Answers 501 when SAML is not enabled or the edition is not enterprise.',
    tags: ['users'],
    schema: {
      response: {
        200: T.Object({ url: T.String({ format: 'uri' }) }),
        501: T.Object({ message: T.String() }),
      },
    },
    async handler({ scope }) {
      if (!scope.hasRegistration('saml')) {
        throw new NotImplemented(
          'SAML is not enabled: it needs the enterprise edition and an identity provider',
        );
      }
      const saml = scope.resolve('saml') as SamlProvider;
      return { url: await saml.authUrl() };
    },
  }),
];
