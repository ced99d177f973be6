import { type Static, Type as T } from '@sinclair/typebox';

/**
 * The enterprise plugin's settings, under `saml` in the configuration (its manifest's `configKey`), as they were
 * when core held them, so files and environments that set them keep working. Whoever sets SAML up (these keys or
 * the console), sign-ins waiting for the identity provider are bounded per source address and in total, and
 * answers signed with SHA-1 are refused unless `allowSha1` is true (an old IdP).
 */
export const samlConfigSchema = T.Object(
  {
    idpMetadataUrl: T.Optional(
      T.String({
        format: 'uri',
        description:
          "Address of the identity provider's SAML metadata (enterprise edition): its entity ID, sign-in address and signing certificates are read from it, and read again every hour.",
      }),
    ),
    idpMetadataXml: T.Optional(
      T.String({
        description: "The identity provider's SAML metadata document itself, instead of its address.",
      }),
    ),
    idpEntityId: T.Optional(
      T.String({
        description: "The identity provider's entity ID, when it is set up by hand (no metadata).",
      }),
    ),
    idpSsoUrl: T.Optional(
      T.String({
        format: 'uri',
        description:
          "The identity provider's single sign-on address (HTTP-Redirect binding), set up by hand.",
      }),
    ),
    idpCertificate: T.Optional(
      T.String({
        description:
          "The identity provider's signing certificate(s), PEM (several one after the other while it rolls its key), set up by hand.",
      }),
    ),
    spEntityId: T.Optional(
      T.String({
        description:
          "This server's entity ID as the identity provider knows it (default <publicUrl>/api/user/saml/metadata).",
      }),
    ),
    signRequests: T.Optional(
      T.Boolean({
        description: 'Sign the authentication requests sent to the identity provider with spPrivateKey.',
      }),
    ),
    spPrivateKey: T.Optional(
      T.String({
        description: 'PEM private key that signs authentication requests (with signRequests).',
      }),
    ),
    spCertificate: T.Optional(
      T.String({
        description: 'PEM certificate of spPrivateKey, published in the service provider metadata.',
      }),
    ),
    localLogin: T.Optional(
      T.Boolean({
        description:
          'false makes the instance SSO-only while SAML is on: password sign-in (and its MFA recovery) answers 403.',
      }),
    ),
    idpInitiated: T.Optional(
      T.Boolean({
        description:
          'true accepts sign-ins started at the identity provider (its app tiles): an assertion that answers no request is accepted once, within 5 minutes of its IssueInstant. Off by default.',
      }),
    ),
    startsPerSource: T.Integer({
      minimum: 1,
      default: 60,
      description:
        'Sign-ins one source address (IPv6: its /64) may have waiting for the identity provider at once: each GET /api/user/saml/auth stores its request for 10 minutes; more answer 429 with Retry-After.',
    }),
    startsTotal: T.Integer({
      minimum: 1,
      default: 10000,
      description:
        'Sign-ins the whole installation may have waiting for the identity provider at once (every source together); more answer 429 with Retry-After.',
    }),
    allowSha1: T.Boolean({
      default: false,
      description:
        'Accept identity provider answers signed or digested with SHA-1 (refused by default: SHA-1 signatures can be forged). Only for an old IdP that cannot sign with SHA-256; applies to set-ups made in the console too.',
    }),
    attributes: T.Optional(
      T.Object(
        {
          email: T.Optional(
            T.String({
              description:
                'Attribute holding the e-mail address (default: the NameID when it is one, else the usual e-mail attributes).',
            }),
          ),
          name: T.Optional(
            T.String({
              description: 'Attribute holding the display name (default: the usual name attributes).',
            }),
          ),
          username: T.Optional(
            T.String({
              description: 'Attribute holding the username (default: made from the e-mail address).',
            }),
          ),
          namespace: T.Optional(
            T.String({
              description: 'Attribute naming namespaces the user is made a member of at sign-in.',
            }),
          ),
          role: T.Optional(
            T.String({
              description: 'Attribute holding the role in those namespaces (default observer).',
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  {
    additionalProperties: false,
    description:
      'SAML single sign-on. Set here, it is on and the console shows it read-only; unset, instance administrators set it in the console.',
  },
);

export type SamlConfig = Static<typeof samlConfigSchema>;

/** The variables of these settings, each with the key it sets. */
export const samlEnv: Record<string, string> = {
  GATEHOUSE_SAML_IDP_METADATA_URL: 'idpMetadataUrl',
  GATEHOUSE_SAML_IDP_METADATA_XML: 'idpMetadataXml',
  GATEHOUSE_SAML_IDP_ENTITY_ID: 'idpEntityId',
  GATEHOUSE_SAML_IDP_SSO_URL: 'idpSsoUrl',
  GATEHOUSE_SAML_IDP_CERTIFICATE: 'idpCertificate',
  GATEHOUSE_SAML_SP_ENTITY_ID: 'spEntityId',
  GATEHOUSE_SAML_SIGN_REQUESTS: 'signRequests',
  GATEHOUSE_SAML_SP_PRIVATE_KEY: 'spPrivateKey',
  GATEHOUSE_SAML_SP_CERTIFICATE: 'spCertificate',
  GATEHOUSE_SAML_LOCAL_LOGIN: 'localLogin',
  GATEHOUSE_SAML_IDP_INITIATED: 'idpInitiated',
  GATEHOUSE_SAML_STARTS_PER_SOURCE: 'startsPerSource',
  GATEHOUSE_SAML_STARTS_TOTAL: 'startsTotal',
  GATEHOUSE_SAML_ALLOW_SHA1: 'allowSha1',
  GATEHOUSE_SAML_ATTRIBUTE_EMAIL: 'attributes.email',
  GATEHOUSE_SAML_ATTRIBUTE_NAME: 'attributes.name',
  GATEHOUSE_SAML_ATTRIBUTE_USERNAME: 'attributes.username',
  GATEHOUSE_SAML_ATTRIBUTE_NAMESPACE: 'attributes.namespace',
  GATEHOUSE_SAML_ATTRIBUTE_ROLE: 'attributes.role',
};
