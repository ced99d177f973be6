import { type Static, Type as T } from '@sinclair/typebox';

const pem = (description: string) => T.String({ maxLength: 65_536, description });
const attributeName = T.String({ maxLength: 255 });

/** The SAML settings as instance administration shows them: the SP key never leaves the server. */
export const settingsView = T.Object({
  source: T.Union([T.Literal('config'), T.Literal('console')], {
    description: 'config: set by the saml.* keys, read-only here',
  }),
  enabled: T.Boolean(),
  active: T.Boolean({ description: 'SAML answers sign-ins now (GET /info reports it)' }),
  problem: T.String({ description: 'why an enabled SAML does not answer; empty when it does' }),
  idp_metadata_url: T.String(),
  idp_metadata_xml: T.String(),
  idp_entity_id: T.String(),
  idp_sso_url: T.String(),
  idp_certificate: T.String(),
  sign_requests: T.Boolean(),
  sp_certificate: T.String(),
  sp_private_key_set: T.Boolean({ description: 'a signing key is stored (it is never sent back)' }),
  local_login: T.Boolean(),
  idp_initiated: T.Boolean({
    description: 'sign-ins started at the identity provider (unsolicited assertions) are accepted, each once',
  }),
  attributes: T.Object({
    email: T.String(),
    name: T.String(),
    username: T.String(),
    namespace: T.String(),
    role: T.String(),
  }),
  sp: T.Object({ entity_id: T.String(), acs_url: T.String(), metadata_url: T.String() }),
  idp: T.Union([
    T.Object({
      entity_id: T.String(),
      sso_url: T.String(),
      slo_url: T.String({
        description: "the IdP's single logout address (HTTP-Redirect); empty when it offers none",
      }),
      certificates: T.Integer(),
    }),
    T.Null(),
  ]),
});
export type SamlSettingsView = Static<typeof settingsView>;

/** What the console sends to change the settings. */
export const settingsInput = T.Object({
  enabled: T.Boolean(),
  idp_metadata_url: T.Optional(
    T.Union([T.String({ format: 'uri', maxLength: 2048, pattern: '^https?://' }), T.Literal('')]),
  ),
  idp_metadata_xml: T.Optional(T.String({ maxLength: 262_144 })),
  idp_entity_id: T.Optional(T.String({ maxLength: 1024 })),
  idp_sso_url: T.Optional(
    T.Union([T.String({ format: 'uri', maxLength: 2048, pattern: '^https?://' }), T.Literal('')]),
  ),
  idp_certificate: T.Optional(pem("the IdP's signing certificate(s), PEM")),
  sign_requests: T.Optional(T.Boolean()),
  sp_private_key: T.Optional(
    pem('PEM key signing the requests; omitted keeps the stored one, empty removes it'),
  ),
  sp_certificate: T.Optional(pem('PEM certificate of that key')),
  local_login: T.Optional(T.Boolean({ description: 'false: SSO-only while SAML is on' })),
  idp_initiated: T.Optional(
    T.Boolean({
      description:
        'true: accept sign-ins started at the identity provider (app tiles); each assertion once, within 5 minutes of being issued. Default false',
    }),
  ),
  attributes: T.Optional(
    T.Object({
      email: T.Optional(attributeName),
      name: T.Optional(attributeName),
      username: T.Optional(attributeName),
      namespace: T.Optional(attributeName),
      role: T.Optional(attributeName),
    }),
  ),
});
export type SettingsInput = Static<typeof settingsInput>;
