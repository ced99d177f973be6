import { Invalid } from '@gatehouse/core';
import { DOMParser } from '@xmldom/xmldom';
import xpath from 'xpath';

/** What Gatehouse needs of an identity provider: who it is, where it signs people in, how it signs. */
export interface IdentityProvider {
  entityId: string;
  /** The single sign-on address for the HTTP-Redirect binding. */
  ssoUrl: string;
  /** Signing certificates, PEM (several while the IdP rolls its key). */
  certificates: string[];
  /** The IdP's metadata says it wants signed authentication requests. */
  wantsSignedRequests: boolean;
  /** The single logout address for the HTTP-Redirect binding, when the IdP's metadata gives one. */
  sloUrl?: string;
}

const REDIRECT_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';
// biome-ignore lint/correctness/useHookAtTopLevel: xpath's namespace resolver, not a React hook
const select = xpath.useNamespaces({
  md: 'urn:oasis:names:tc:SAML:2.0:metadata',
  ds: 'http://www.w3.org/2000/09/xmldsig#',
});

/**
 * Reads an IdP's SAML metadata (an EntityDescriptor, or the first IdP of an EntitiesDescriptor). Refuses what it
 * cannot use with 400 naming `field`: no IdP descriptor, no HTTP-Redirect sign-in address, no signing certificate.
 */
export function parseIdpMetadata(xml: string, field = 'idp_metadata_xml'): IdentityProvider {
  const errors: string[] = [];
  const doc = new DOMParser({
    errorHandler: { error: (m: string) => errors.push(m), fatalError: (m: string) => errors.push(m) },
  }).parseFromString(xml, 'text/xml');
  if (errors.length || !doc?.documentElement) throw new Invalid([field], 'the metadata is not XML');
  // DTDs have no place in metadata (entity expansion): refuse them outright.
  if (doc.doctype) throw new Invalid([field], 'the metadata must not carry a DOCTYPE');
  const entity = select('//md:EntityDescriptor[md:IDPSSODescriptor]', doc as unknown as Node, true) as
    | Element
    | undefined;
  const idp = entity
    ? (select('md:IDPSSODescriptor', entity as unknown as Node, true) as Element | undefined)
    : undefined;
  if (!entity || !idp) throw new Invalid([field], 'the metadata describes no identity provider');
  const entityId = entity.getAttribute('entityID') ?? '';
  const sso = select(
    `md:SingleSignOnService[@Binding='${REDIRECT_BINDING}']/@Location`,
    idp as unknown as Node,
    true,
  ) as Attr | undefined;
  const certificates = (
    select(
      "md:KeyDescriptor[not(@use) or @use='signing']/ds:KeyInfo/ds:X509Data/ds:X509Certificate",
      idp as unknown as Node,
    ) as Element[]
  )
    .map((e) => pemCertificate(e.textContent ?? ''))
    .filter((pem): pem is string => pem !== undefined);
  if (!entityId) throw new Invalid([field], 'the metadata has no entityID');
  if (!sso?.value)
    throw new Invalid([field], 'the identity provider offers no HTTP-Redirect sign-in address');
  if (!certificates.length)
    throw new Invalid([field], 'the identity provider publishes no signing certificate');
  const slo = select(
    `md:SingleLogoutService[@Binding='${REDIRECT_BINDING}']/@Location`,
    idp as unknown as Node,
    true,
  ) as Attr | undefined;
  return {
    entityId,
    ssoUrl: sso.value,
    certificates,
    wantsSignedRequests: idp.getAttribute('WantAuthnRequestsSigned') === 'true',
    ...(slo?.value && /^https?:\/\//i.test(slo.value) ? { sloUrl: slo.value } : {}),
  };
}

/** A base64 DER certificate (as metadata holds it) as PEM; undefined when it is not base64. */
export function pemCertificate(base64: string): string | undefined {
  const body = base64.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
  if (!body || !/^[A-Za-z0-9+/]+=*$/.test(body)) return undefined;
  const lines = body.match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}

/** Every PEM certificate in a text (several may follow one another). */
export function splitCertificates(text: string): string[] {
  return [...text.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g)]
    .map((m) => pemCertificate(m[0]))
    .filter((pem): pem is string => pem !== undefined);
}
