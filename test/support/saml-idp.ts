import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DOMParser } from '@xmldom/xmldom';
import * as samlify from 'samlify';
import { freePort } from './process-server';
import { startServer, type TestServer } from './server';

/** A key and its self-signed certificate, made with openssl for one test run. */
export interface KeyPair {
  key: string;
  cert: string;
}

export function selfSigned(commonName: string): KeyPair {
  const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-saml-'));
  try {
    const key = path.join(dir, 'key.pem');
    const cert = path.join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', `/CN=${commonName}`].concat([
        '-keyout',
        key,
        '-out',
        cert,
      ]),
      { stdio: 'ignore' },
    );
    return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// The test IdP reads the requests of the server under test. samlify insists on an XML schema validator before it
// parses anything; the published ones need Java or a native build, so this one accepts every document. samlify's own
// checks (request signature when the IdP wants one, issuer, binding) still run; the server under test is what the
// tests judge.
samlify.setSchemaValidator({ validate: async () => 'skipped' });

/** What the IdP asserts about the person, and how the answer is bent for the negative cases. */
export interface Answer {
  email: string;
  name?: string;
  attributes?: Record<string, string | string[]>;
  /** Audience other than the SP's entity ID. */
  audience?: string;
  /** NotOnOrAfter of the conditions and of the subject confirmation. */
  notOnOrAfter?: Date;
  notBefore?: Date;
  /** Recipient other than the SP's assertion consumer. */
  recipient?: string;
  /** Destination other than the SP's assertion consumer. */
  destination?: string;
  /** Issuer other than the IdP's entity ID. */
  issuer?: string;
  /** IssueInstant of the response and the assertion other than now. */
  issuedAt?: Date;
}

/**
 * A SAML identity provider for tests: samlify with a self-signed certificate (openssl), its metadata, the answers
 * (signed responses) it gives to the server's authentication requests, and a small HTTP server whose sign-in page
 * posts the answer back to the browser's service provider, as a real IdP's page does.
 */
export class TestIdp {
  readonly entityId: string;
  readonly keys: KeyPair;
  private idp: samlify.IdentityProviderInstance;
  private server: Server | undefined;
  ssoUrl: string;
  /** Who the next browser sign-in is (the IdP's own sign-in is not what is tested). */
  person: Answer = { email: 'sso.user@example.com', name: 'Sso User' };
  /** Requests the sign-in page received, parsed. */
  readonly requests: { id: string; signed: boolean }[] = [];
  /** LogoutRequests the single logout page received from the SP, parsed. */
  readonly logouts: { nameID: string; sessionIndex: string }[] = [];

  /** The XML signature algorithm of its answers (samlify's default, RSA-SHA256, when unset). */
  private readonly signatureAlgorithm: string | undefined;

  constructor(
    opts: {
      entityId?: string;
      keys?: KeyPair;
      ssoUrl?: string;
      wantSignedRequests?: boolean;
      /** e.g. `http://www.w3.org/2000/09/xmldsig#rsa-sha1`, as an old IdP signs (its digest follows). */
      signatureAlgorithm?: string;
    } = {},
  ) {
    this.entityId = opts.entityId ?? 'https://idp.test.example/metadata';
    this.keys = opts.keys ?? selfSigned('test-idp');
    this.ssoUrl = opts.ssoUrl ?? 'https://idp.test.example/sso';
    this.signatureAlgorithm = opts.signatureAlgorithm;
    this.idp = this.build(opts.wantSignedRequests ?? false);
  }

  private build(wantSignedRequests: boolean) {
    return samlify.IdentityProvider({
      entityID: this.entityId,
      signingCert: this.keys.cert,
      privateKey: this.keys.key,
      ...(this.signatureAlgorithm ? { requestSignatureAlgorithm: this.signatureAlgorithm } : {}),
      wantAuthnRequestsSigned: wantSignedRequests,
      nameIDFormat: ['urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress'],
      singleSignOnService: [{ Binding: samlify.Constants.namespace.binding.redirect, Location: this.ssoUrl }],
      singleLogoutService: [
        {
          Binding: samlify.Constants.namespace.binding.redirect,
          Location: this.ssoUrl.replace(/\/sso$/, '/slo'),
        },
      ],
    });
  }

  /** Wants the SP's requests signed from now on (metadata says so, and unsigned requests are refused). */
  wantSignedRequests(want = true): void {
    this.idp = this.build(want);
  }

  metadata(): string {
    return this.idp.getMetadata();
  }

  /** The signed SAMLResponse (base64) answering the request in `authUrl`, as the SP in `spMetadata` expects it. */
  async answer(authUrl: string, spMetadata: string, who: Answer): Promise<string> {
    const sp = samlify.ServiceProvider({ metadata: spMetadata });
    const query = Object.fromEntries(new URL(authUrl).searchParams);
    const parsed = await this.idp.parseLoginRequest(sp, 'redirect', { query, octetString: octets(authUrl) });
    const requestId = String(parsed.extract.request?.id ?? '');
    this.requests.push({ id: requestId, signed: Boolean(query.Signature) });
    return this.respond(sp, spMetadata, who, parsed.extract);
  }

  /** The SP as this IdP sees it: its single logout messages both ways are signed (HTTP-Redirect). */
  private spOf(spMetadata: string) {
    return samlify.ServiceProvider({
      metadata: spMetadata,
      wantLogoutRequestSigned: true,
      wantLogoutResponseSigned: true,
    });
  }

  /**
   * Answers the SP's LogoutRequest (the browser arrives with it at the single logout page): the address of the SP's
   * single logout service with a signed LogoutResponse.
   */
  async logoutResponse(url: string, spMetadata: string): Promise<string> {
    const sp = this.spOf(spMetadata);
    const query = Object.fromEntries(new URL(url).searchParams);
    const parsed = await this.idp.parseLogoutRequest(sp, 'redirect', { query, octetString: octets(url) });
    const extract = parsed.extract as { nameID?: string; sessionIndex?: string | { sessionIndex?: string } };
    this.logouts.push({
      nameID: String(extract.nameID ?? ''),
      sessionIndex: String(
        typeof extract.sessionIndex === 'object'
          ? (extract.sessionIndex?.sessionIndex ?? '')
          : (extract.sessionIndex ?? ''),
      ),
    });
    return this.idp.createLogoutResponse(sp, parsed as never, 'redirect', query.RelayState ?? '').context;
  }

  /** A signed LogoutRequest for `email` (IdP-initiated single logout): the SP's single logout address with it. */
  logoutRequest(spMetadata: string, email: string): string {
    return this.idp.createLogoutRequest(this.spOf(spMetadata), 'redirect', { logoutNameID: email }).context;
  }

  /**
   * A signed SAMLResponse that answers no request (no InResponseTo), as an IdP sends when the person starts at its
   * app tile (IdP-initiated sign-in).
   */
  async unsolicited(spMetadata: string, who: Answer): Promise<string> {
    return this.respond(samlify.ServiceProvider({ metadata: spMetadata }), spMetadata, who, undefined);
  }

  private async respond(
    sp: samlify.ServiceProviderInstance,
    spMetadata: string,
    who: Answer,
    extract: { request?: { id?: string } } | undefined,
  ): Promise<string> {
    const requestId = String(extract?.request?.id ?? '');
    const acs = acsOf(spMetadata);
    const now = who.issuedAt ?? new Date();
    const later = who.notOnOrAfter ?? new Date(now.getTime() + 5 * 60_000);
    const values: Record<string, string> = {
      ID: `_${randomBytes(16).toString('hex')}`,
      AssertionID: `_${randomBytes(16).toString('hex')}`,
      Destination: who.destination ?? acs,
      Audience: who.audience ?? sp.entityMeta.getEntityID(),
      SubjectRecipient: who.recipient ?? acs,
      Issuer: who.issuer ?? this.entityId,
      IssueInstant: now.toISOString(),
      StatusCode: samlify.Constants.StatusCode.Success,
      ConditionsNotBefore: (who.notBefore ?? new Date(now.getTime() - 60_000)).toISOString(),
      ConditionsNotOnOrAfter: later.toISOString(),
      SubjectConfirmationDataNotOnOrAfter: later.toISOString(),
      NameIDFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
      NameID: who.email,
      InResponseTo: requestId,
      AuthnStatement: `<saml:AuthnStatement AuthnInstant="${now.toISOString()}" SessionIndex="_s${randomBytes(4).toString('hex')}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>`,
      AttributeStatement: attributeStatement({
        ...(who.name ? { displayName: who.name } : {}),
        email: who.email,
        ...who.attributes,
      }),
    };
    const response = await this.idp.createLoginResponse(
      sp,
      (extract ? { extract } : {}) as never,
      'post',
      { email: who.email },
      (template) => ({
        id: values.ID as string,
        // Unsolicited: the response and its subject confirmation answer nothing, so they carry no InResponseTo.
        context: fill(
          requestId ? template : template.replaceAll(' InResponseTo="{InResponseTo}"', ''),
          values,
        ),
      }),
    );
    return response.context;
  }

  /**
   * Serves the IdP's sign-in page on loopback: it answers the request in its query for `person` and posts the answer
   * (with the request's RelayState) to the SP's assertion consumer with an auto-submitted form, as IdPs do after
   * their own sign-in. `/tile?RelayState=...` is an app tile: an unsolicited answer (IdP-initiated sign-in).
   */
  async listen(spMetadata: () => Promise<string>): Promise<void> {
    this.server = createServer((req, res) => {
      const url = new URL(`http://127.0.0.1${req.url ?? '/'}`);
      (async () => {
        const metadata = await spMetadata();
        const acs = acsOf(metadata);
        if (url.pathname === '/slo') {
          res.writeHead(302, { location: await this.logoutResponse(url.toString(), metadata) });
          res.end();
          return;
        }
        const answer =
          url.pathname === '/tile'
            ? await this.unsolicited(metadata, this.person)
            : await this.answer(url.toString(), metadata, this.person);
        const relay = url.searchParams.get('RelayState');
        const relayInput =
          relay === null ? '' : `<input type="hidden" name="RelayState" value="${escapeXml(relay)}">`;
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(
          `<!doctype html><title>Test IdP</title><form method="post" action="${acs}"><input type="hidden" name="SAMLResponse" value="${answer}">${relayInput}<button>Continue to Gatehouse</button></form><script>document.forms[0].submit()</script>`,
        );
      })().catch((err: unknown) => {
        res.writeHead(400, { 'content-type': 'text/plain' });
        res.end(`the test IdP refused the request: ${String(err)}`);
      });
    });
    this.server.listen(0, '127.0.0.1');
    await new Promise((resolve) => this.server?.once('listening', resolve));
    this.ssoUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/sso`;
    this.idp = this.build(this.idp.entitySetting.wantAuthnRequestsSigned ?? false);
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

/**
 * An enterprise server whose public URL is its own loopback address, as the assertions must name it (audience,
 * recipient, destination), without SSH.
 */
export async function startSamlServer(): Promise<{ server: TestServer; publicUrl: string }> {
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const server = await startServer({
    edition: 'enterprise',
    ssh: false,
    overrides: { http: { port, host: '127.0.0.1' }, publicUrl },
  });
  return { server, publicUrl };
}

/** The template with its `{Tag}`s filled: statements go in as XML, every other value escaped. */
function fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{([A-Za-z]+)\}/g, (whole, tag: string) => {
    const value = values[tag];
    if (value === undefined) return whole;
    return tag === 'AuthnStatement' || tag === 'AttributeStatement' ? value : escapeXml(value);
  });
}

/** The SP's HTTP-POST assertion consumer address, from its metadata. */
function acsOf(metadata: string): string {
  const doc = new DOMParser().parseFromString(metadata, 'text/xml');
  const services = doc.getElementsByTagNameNS(
    'urn:oasis:names:tc:SAML:2.0:metadata',
    'AssertionConsumerService',
  );
  for (const el of Array.from(services)) {
    if (el.getAttribute('Binding') === 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST')
      return el.getAttribute('Location') ?? '';
  }
  throw new Error('the SP metadata has no HTTP-POST assertion consumer');
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function attributeStatement(attributes: Record<string, string | string[]>): string {
  const items = Object.entries(attributes).map(
    ([name, value]) =>
      `<saml:Attribute Name="${escapeXml(name)}" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:basic">${(Array.isArray(value) ? value : [value]).map((v) => `<saml:AttributeValue xsi:type="xs:string">${escapeXml(v)}</saml:AttributeValue>`).join('')}</saml:Attribute>`,
  );
  return `<saml:AttributeStatement>${items.join('')}</saml:AttributeStatement>`;
}

/** The signed part of a redirect-binding query, as sent (samlify verifies request signatures over it). */
function octets(url: string): string {
  const query = new URL(url).search.slice(1);
  const pick = (name: string) => query.split('&').find((p) => p.startsWith(`${name}=`));
  return ['SAMLRequest', 'RelayState', 'SigAlg'].map(pick).filter(Boolean).join('&');
}

/** Posts an IdP's answer to the server's assertion consumer, as the IdP's page makes the browser do; answers where
 * the consumer sent the browser (`/#sso=<code>` or `/#sso-error=<reason>`). */
export async function postAnswer(baseUrl: string, samlResponse: string): Promise<string> {
  const res = await fetch(`${baseUrl}/api/user/saml/acs`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ SAMLResponse: samlResponse }).toString(),
    redirect: 'manual',
  });
  if (res.status !== 303) throw new Error(`the assertion consumer answered ${res.status}`);
  return res.headers.get('location') ?? '';
}
