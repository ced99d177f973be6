import { DOMParser, XMLSerializer } from '@xmldom/xmldom';
import { expect } from 'chai';
import { setupSignature } from '../../../plugins/community/setup/signature';
import { type KeyPair, selfSigned, startSamlServer, TestIdp } from '../../support/saml-idp';
import { defaultUser, type LoginAnswer, startServer, type TestServer } from '../../support/server';

/** Where the assertion consumer sent the browser: the console with a code, or with the reason of a refusal. */
interface Landing {
  status: number;
  code?: string;
  error?: string;
}

async function post(server: TestServer, samlResponse: string, url = server.url): Promise<Landing> {
  const res = await fetch(`${url}/api/user/saml/acs`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ SAMLResponse: samlResponse }).toString(),
    redirect: 'manual',
  });
  const location = res.headers.get('location') ?? '';
  const code = /^\/#sso=([A-Za-z0-9_-]+)$/.exec(location)?.[1];
  const error = /^\/#sso-error=([a-z]+)$/.exec(location)?.[1];
  return { status: res.status, ...(code ? { code } : {}), ...(error ? { error } : {}) };
}

async function authUrl(server: TestServer): Promise<string> {
  const res = await server.api('GET', '/api/user/saml/auth');
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return res.body.url as string;
}

async function spMetadata(server: TestServer): Promise<string> {
  const res = await fetch(`${server.url}/api/user/saml/metadata`);
  expect(res.status).to.equal(200);
  return res.text();
}

function decode(b64: string): Document {
  return new DOMParser().parseFromString(Buffer.from(b64, 'base64').toString('utf8'), 'text/xml') as never;
}
function encode(doc: Document): string {
  return Buffer.from(new XMLSerializer().serializeToString(doc as never)).toString('base64');
}
const SAML = 'urn:oasis:names:tc:SAML:2.0:assertion';
const DSIG = 'http://www.w3.org/2000/09/xmldsig#';

describe('SAML single sign-on against a signing IdP (samlify)', function () {
  this.timeout(120_000);
  let server: TestServer;
  let admin: LoginAnswer;
  let idp: TestIdp;
  let publicUrl: string;

  before(async () => {
    idp = new TestIdp();
    ({ server, publicUrl } = await startSamlServer());
    admin = await server.setup();
  });
  after(async () => {
    await server?.stop();
  });

  /** A fresh request from the server and the IdP's answer to it. */
  async function answered(who: Parameters<TestIdp['answer']>[2], from: TestIdp = idp): Promise<string> {
    return from.answer(await authUrl(server), await spMetadata(server), who);
  }

  async function configure(body: Record<string, unknown>) {
    const res = await server.api('PUT', '/api/admin/saml', { token: admin.token, body });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body;
  }

  it('is off until an instance administrator sets it up: /info says so and the calls answer 501', async () => {
    const info = await server.api('GET', '/info');
    expect(info.body.authentication).to.deep.equal({ local: true, saml: false });
    expect((await server.api('GET', '/api/user/saml/auth')).status).to.equal(501);
    const view = await server.api('GET', '/api/admin/saml', { token: admin.token });
    expect(view.status).to.equal(200);
    expect(view.body).to.include({ source: 'console', enabled: false, active: false });
    expect(view.body.sp).to.deep.equal({
      entity_id: `${publicUrl}/api/user/saml/metadata`,
      acs_url: `${publicUrl}/api/user/saml/acs`,
      metadata_url: `${publicUrl}/api/user/saml/metadata`,
    });
  });

  it('serves its service provider metadata for the IdP to import', async () => {
    const res = await fetch(`${server.url}/api/user/saml/metadata`);
    expect(res.headers.get('content-type')).to.match(/^application\/samlmetadata\+xml/);
    const xml = await res.text();
    expect(xml).to.include(`entityID="${publicUrl}/api/user/saml/metadata"`);
    expect(xml).to.include(`Location="${publicUrl}/api/user/saml/acs"`);
    expect(xml).to.include('WantAssertionsSigned="true"');
  });

  it('refuses settings it cannot use, naming the fields', async () => {
    const bad = await server.api('PUT', '/api/admin/saml', {
      token: admin.token,
      body: { enabled: true, idp_metadata_xml: '<not-metadata/>' },
    });
    expect(bad.status).to.equal(400);
    expect(bad.body).to.deep.equal(['idp_metadata_xml']);
    const manual = await server.api('PUT', '/api/admin/saml', {
      token: admin.token,
      body: { enabled: true, idp_entity_id: 'x', idp_certificate: 'not a certificate' },
    });
    expect(manual.status).to.equal(400);
    expect(manual.body).to.have.members(['idp_certificate', 'idp_sso_url']);
    const member = await server.api('GET', '/api/admin/saml', { token: (await signUp(server)).token });
    expect(member.status).to.equal(403);
  });

  it('turns on from the IdP metadata: /info reports saml and the sign-in address is the IdP with a request', async () => {
    const view = await configure({ enabled: true, idp_metadata_xml: idp.metadata() });
    expect(view).to.include({ active: true, problem: '' });
    expect(view.idp).to.deep.equal({
      entity_id: idp.entityId,
      sso_url: idp.ssoUrl,
      slo_url: 'https://idp.test.example/slo',
      certificates: 1,
    });
    const info = await server.api('GET', '/info');
    expect(info.body.authentication).to.deep.equal({ local: true, saml: true });
    const url = new URL(await authUrl(server));
    expect(`${url.origin}${url.pathname}`).to.equal(idp.ssoUrl);
    expect(url.searchParams.get('SAMLRequest')).to.be.a('string');
    expect(url.searchParams.has('Signature')).to.equal(false);
  });

  it('signs a person in just in time and gives the token a password sign-in gives, through a one-time code', async () => {
    const landing = await post(server, await answered({ email: 'Grace@Example.com', name: 'Grace Hopper' }));
    expect(landing.status).to.equal(303);
    expect(landing.error).to.equal(undefined);
    const code = landing.code as string;
    const auth = await server.api('POST', '/api/user/saml/token', { body: { code } });
    expect(auth.status).to.equal(200);
    expect(auth.body).to.include({
      email: 'grace@example.com',
      name: 'Grace Hopper',
      user: 'grace',
      origin: 'saml',
    });
    const me = await server.api('GET', '/api/auth/user', { token: auth.body.token });
    expect(me.status).to.equal(200);
    expect(me.body.id).to.equal(auth.body.id);
    const again = await server.api('POST', '/api/user/saml/token', { body: { code } });
    expect(again.status).to.equal(401);
    // The second sign-in finds the same account.
    const second = await post(server, await answered({ email: 'grace@example.com' }));
    const next = await server.api('POST', '/api/user/saml/token', { body: { code: second.code } });
    expect(next.body.id).to.equal(auth.body.id);
  });

  it('maps namespace and role attributes as the mapping page describes', async () => {
    const ns = await server.api('POST', '/api/namespaces', {
      token: admin.token,
      body: { name: 'team-sso' },
    });
    expect(ns.status).to.be.oneOf([200, 201]);
    await configure({
      enabled: true,
      idp_metadata_xml: idp.metadata(),
      attributes: { namespace: 'groups', role: 'gatehouseRole', username: 'uid' },
    });
    const landing = await post(
      server,
      await answered({
        email: 'linus@example.com',
        attributes: { groups: ['team-sso', 'no-such-namespace'], gatehouseRole: 'operator', uid: 'linus.t' },
      }),
    );
    const auth = await server.api('POST', '/api/user/saml/token', { body: { code: landing.code } });
    expect(auth.status).to.equal(200);
    expect(auth.body).to.include({ user: 'linus.t', tenant: ns.body.tenant_id, role: 'operator' });
    // The IdP changes the role: the next sign-in follows it; "owner" is never granted this way.
    const owner = await post(
      server,
      await answered({
        email: 'linus@example.com',
        attributes: { groups: 'team-sso', gatehouseRole: 'owner' },
      }),
    );
    const after = await server.api('POST', '/api/user/saml/token', { body: { code: owner.code } });
    expect(after.body.role).to.equal('observer');
  });

  describe('refuses', () => {
    before(() => configure({ enabled: true, idp_metadata_xml: idp.metadata() }));

    async function refused(samlResponse: string): Promise<string> {
      const landing = await post(server, samlResponse);
      expect(landing.status).to.equal(303);
      expect(landing.code, 'a refused answer must not sign anyone in').to.equal(undefined);
      return landing.error as string;
    }

    it('an unsigned response', async () => {
      const doc = decode(await answered({ email: 'mallory@example.com' }));
      for (const sig of Array.from(doc.getElementsByTagNameNS(DSIG, 'Signature')))
        sig.parentNode?.removeChild(sig);
      expect(await refused(encode(doc))).to.equal('signature');
    });

    it('a tampered NameID', async () => {
      const doc = decode(await answered({ email: 'mallory@example.com' }));
      const nameId = doc.getElementsByTagNameNS(SAML, 'NameID')[0] as Element;
      nameId.textContent = 'ada@example.com';
      expect(await refused(encode(doc))).to.equal('signature');
    });

    it('a response signed with another certificate', async () => {
      const impostor = new TestIdp({ entityId: idp.entityId, ssoUrl: idp.ssoUrl });
      expect(await refused(await answered({ email: 'ada@example.com' }, impostor))).to.equal('signature');
    });

    it('a response for another audience', async () => {
      const answer = await answered({ email: 'mallory@example.com', audience: 'https://other-sp.example/' });
      expect(await refused(answer)).to.equal('audience');
    });

    it('an expired response', async () => {
      const answer = await answered({
        email: 'mallory@example.com',
        notBefore: new Date(Date.now() - 3_600_000),
        notOnOrAfter: new Date(Date.now() - 1_800_000),
      });
      expect(await refused(answer)).to.equal('expired');
    });

    it('a response meant for another recipient or destination', async () => {
      const recipient = await answered({
        email: 'mallory@example.com',
        recipient: 'https://other-sp.example/acs',
      });
      expect(await refused(recipient)).to.equal('destination');
      const destination = await answered({
        email: 'mallory@example.com',
        destination: 'https://other-sp.example/acs',
      });
      expect(await refused(destination)).to.equal('destination');
    });

    it('a response issued by someone else than the IdP', async () => {
      const answer = await answered({ email: 'mallory@example.com', issuer: 'https://evil.example/' });
      expect(await refused(answer)).to.equal('issuer');
    });

    it('a replayed response, sent again or twice at once', async () => {
      const answer = await answered({ email: 'replay@example.com' });
      expect((await post(server, answer)).code).to.be.a('string');
      expect(await refused(answer)).to.be.oneOf(['request', 'replay']);
      const raced = await answered({ email: 'replay@example.com' });
      const both = await Promise.all([post(server, raced), post(server, raced), post(server, raced)]);
      expect(both.filter((l) => l.code).length, JSON.stringify(both)).to.equal(1);
    });

    it('a response to no request of this server (unsolicited, or an id it never issued)', async () => {
      const doc = decode(await answered({ email: 'mallory@example.com' }));
      doc.documentElement?.setAttribute('InResponseTo', '_never-issued');
      expect(await refused(encode(doc))).to.be.oneOf(['request', 'signature']);
      const unsolicited = decode(await answered({ email: 'mallory@example.com' }));
      unsolicited.documentElement?.removeAttribute('InResponseTo');
      expect(await refused(encode(unsolicited))).to.equal('unsolicited');
    });

    it('hostile bodies: not base64, not XML, entity expansion, a JSON body; bad input is a 4xx, never a 5xx', async () => {
      const laughs = `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "${'a'.repeat(1000)}"><!ENTITY b "${'&a;'.repeat(1000)}"><!ENTITY c "${'&b;'.repeat(1000)}">]><samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol">&c;</samlp:Response>`;
      for (const value of [
        'not base64 at all!',
        Buffer.from('plain text').toString('base64'),
        Buffer.from(laughs).toString('base64'),
      ]) {
        const started = Date.now();
        const landing = await post(server, value);
        expect(landing.status, value.slice(0, 20)).to.equal(303);
        expect(landing.code).to.equal(undefined);
        expect(Date.now() - started, 'answered at once').to.be.below(5000);
      }
      // A NUL no store keeps is refused at the edge, as on every route.
      expect((await post(server, '\u0000')).status).to.equal(400);
      const json = await fetch(`${server.url}/api/user/saml/acs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ SAMLResponse: 'x' }),
        redirect: 'manual',
      });
      expect(json.status).to.equal(303);
      expect(json.headers.get('location')).to.match(/^\/#sso-error=/);
      const missing = await server.api('POST', '/api/user/saml/acs', { body: {} });
      expect(missing.status).to.equal(400);
      expect(missing.body).to.deep.equal(['SAMLResponse']);
      const code = await server.api('POST', '/api/user/saml/token', { body: { code: '../../etc/passwd' } });
      expect(code.status).to.equal(400);
      const badXml = await server.api('PUT', '/api/admin/saml', {
        token: admin.token,
        body: { enabled: true, idp_metadata_xml: laughs },
      });
      expect(badXml.status).to.equal(400);
      expect((await server.api('GET', '/healthz')).status).to.equal(200);
    });

    it('XML signature wrapping: the signed assertion moved aside, a forged one where it is read', async () => {
      for (const place of ['inside', 'extensions'] as const) {
        const doc = decode(await answered({ email: 'mallory@example.com' }));
        const signed = doc.getElementsByTagNameNS(SAML, 'Assertion')[0] as Element;
        const forged = signed.cloneNode(true) as Element;
        forged.setAttribute('ID', '_forged');
        for (const sig of Array.from(forged.getElementsByTagNameNS(DSIG, 'Signature')))
          sig.parentNode?.removeChild(sig);
        (forged.getElementsByTagNameNS(SAML, 'NameID')[0] as Element).textContent = 'ada@example.com';
        const response = doc.documentElement as Element;
        response.replaceChild(forged, signed);
        if (place === 'inside') {
          forged.appendChild(signed);
        } else {
          const extensions = doc.createElementNS('urn:oasis:names:tc:SAML:2.0:protocol', 'samlp:Extensions');
          extensions.appendChild(signed);
          response.insertBefore(extensions, forged);
        }
        expect(await refused(encode(doc)), place).to.equal('signature');
      }
      const ada = await server.api('GET', '/api/admin/users?search=mallory', { token: admin.token });
      expect(ada.body, 'no refused answer created an account').to.deep.equal([]);
    });
  });

  it('signs its authentication requests when configured, and the IdP that wants them verifies them', async () => {
    const sp: KeyPair = selfSigned('gatehouse-sp');
    const other = selfSigned('not-the-sp-key');
    const mismatch = await server.api('PUT', '/api/admin/saml', {
      token: admin.token,
      body: {
        enabled: true,
        idp_metadata_xml: idp.metadata(),
        sign_requests: true,
        sp_private_key: other.key,
        sp_certificate: sp.cert,
      },
    });
    expect(mismatch.status).to.equal(400);
    expect(mismatch.body).to.deep.equal(['sp_private_key']);
    const view = await configure({
      enabled: true,
      idp_metadata_xml: idp.metadata(),
      sign_requests: true,
      sp_private_key: sp.key,
      sp_certificate: sp.cert,
    });
    expect(view).to.include({ sign_requests: true, sp_private_key_set: true });
    expect(JSON.stringify(view)).not.to.include('PRIVATE KEY');
    const metadata = await spMetadata(server);
    expect(metadata).to.include('AuthnRequestsSigned="true"');
    expect(metadata).to.include(sp.cert.split('\n')[1]);
    const url = new URL(await authUrl(server));
    expect(url.searchParams.get('SigAlg')).to.equal('http://www.w3.org/2001/04/xmldsig-more#rsa-sha256');
    idp.wantSignedRequests(true);
    try {
      const landing = await post(
        server,
        await idp.answer(url.toString(), metadata, { email: 'signed@example.com' }),
      );
      expect(landing.code).to.be.a('string');
      // A request whose signature does not match is refused by the IdP.
      const forged = new URL(await authUrl(server));
      forged.searchParams.set('Signature', Buffer.from('forged').toString('base64'));
      let refusedByIdp = false;
      await idp.answer(forged.toString(), metadata, { email: 'signed@example.com' }).catch(() => {
        refusedByIdp = true;
      });
      expect(refusedByIdp).to.equal(true);
    } finally {
      idp.wantSignedRequests(false);
    }
    // Saving again without sending the key keeps the stored one.
    const kept = await configure({
      enabled: true,
      idp_metadata_xml: idp.metadata(),
      sign_requests: true,
      sp_certificate: sp.cert,
    });
    expect(kept.sp_private_key_set).to.equal(true);
  });

  it('SSO-only: local sign-in off while SAML is on, and back on when SAML is off', async () => {
    await configure({ enabled: true, idp_metadata_xml: idp.metadata(), local_login: false });
    expect((await server.api('GET', '/info')).body.authentication).to.deep.equal({
      local: false,
      saml: true,
    });
    const login = await server.api('POST', '/api/login', {
      body: { username: 'ada', password: 'correct-horse' },
    });
    expect(login.status).to.equal(403);
    const recover = await server.api('POST', '/api/user/mfa/recover', {
      body: { identifier: 'ada', recovery_code: 'whatever' },
    });
    expect(recover.status).to.equal(403);
    const landing = await post(server, await answered({ email: 'ada@example.com' }));
    const auth = await server.api('POST', '/api/user/saml/token', { body: { code: landing.code } });
    expect(auth.body).to.include({ user: 'ada', admin: true });
    // Turning SAML off gives local sign-in back, whatever local_login says.
    const off = await server.api('PUT', '/api/admin/saml', {
      token: auth.body.token,
      body: { enabled: false, idp_metadata_xml: idp.metadata(), local_login: false },
    });
    expect(off.status).to.equal(200);
    expect((await server.api('GET', '/info')).body.authentication).to.deep.equal({
      local: true,
      saml: false,
    });
    expect(
      (await server.api('POST', '/api/login', { body: { username: 'ada', password: 'correct-horse' } }))
        .status,
    ).to.equal(200);
    expect((await server.api('GET', '/api/user/saml/auth')).status).to.equal(501);
  });

  it('several instances: a request made on one is answered on another, once (pending without TEST_DATABASE_URL)', async function () {
    if (!process.env.TEST_DATABASE_URL) this.skip(); // PGlite is in-process: instances cannot share it
    await configure({ enabled: true, idp_metadata_xml: idp.metadata() });
    const second = await startServer({
      edition: 'enterprise',
      ssh: false,
      sharing: server,
      overrides: { publicUrl },
    });
    try {
      expect((await second.api('GET', '/info')).body.authentication.saml).to.equal(true);
      const answer = await answered({ email: 'scale@example.com' });
      const there = await post(server, answer, second.url);
      expect(there.code).to.be.a('string');
      const back = await post(server, answer);
      expect(back.code).to.equal(undefined);
      const auth = await second.api('POST', '/api/user/saml/token', { body: { code: there.code } });
      expect(auth.status).to.equal(200);
      // A change made on one instance reaches the other at once.
      await configure({ enabled: false, idp_metadata_xml: idp.metadata() });
      for (let i = 0; i < 50 && (await second.api('GET', '/info')).body.authentication.saml; i++)
        await new Promise((r) => setTimeout(r, 100));
      expect((await second.api('GET', '/info')).body.authentication.saml).to.equal(false);
    } finally {
      await second.stop();
    }
  });
});

describe('SAML set up by config keys', function () {
  this.timeout(60_000);
  let server: TestServer;
  const idp = new TestIdp();

  before(async () => {
    server = await startServer({
      edition: 'enterprise',
      ssh: false,
      overrides: { saml: { idpMetadataXml: idp.metadata(), localLogin: false, attributes: { name: 'cn' } } },
    });
  });
  after(async () => {
    await server?.stop();
  });

  it('is on at start, SSO-only as configured, and read-only in the console', async () => {
    expect((await server.api('GET', '/info')).body.authentication).to.deep.equal({
      local: false,
      saml: true,
    });
    // First-run setup still makes the administrator; they sign in through the IdP with the same e-mail address.
    const sign = setupSignature(server.kernel.container.cradle.keys);
    const setup = await server.api('POST', `/api/setup?sign=${sign}`, { body: defaultUser });
    expect(setup.status).to.equal(200);
    const login = await server.api('POST', '/api/login', {
      body: { username: defaultUser.username, password: defaultUser.password },
    });
    expect(login.status).to.equal(403);
    const metadata = await (await fetch(`${server.url}/api/user/saml/metadata`)).text();
    const url = (await server.api('GET', '/api/user/saml/auth')).body.url as string;
    const landing = await post(server, await idp.answer(url, metadata, { email: defaultUser.email }));
    const auth = await server.api('POST', '/api/user/saml/token', { body: { code: landing.code } });
    expect(auth.body).to.include({ user: defaultUser.username, admin: true });
    const view = await server.api('GET', '/api/admin/saml', { token: auth.body.token });
    expect(view.body).to.include({ source: 'config', enabled: true, active: true, local_login: false });
    expect(view.body.attributes.name).to.equal('cn');
    const change = await server.api('PUT', '/api/admin/saml', {
      token: auth.body.token,
      body: { enabled: false },
    });
    expect(change.status).to.equal(403);
  });
});

describe('SAML answers from one address, refused again and again', function () {
  this.timeout(60_000);
  let server: TestServer;
  const idp = new TestIdp();

  before(async () => {
    server = await startServer({
      edition: 'enterprise',
      ssh: false,
      overrides: {
        saml: { idpMetadataXml: idp.metadata() },
        auth: { loginFailuresPerSource: 3, loginWindowSeconds: 300 },
      },
    });
  });
  after(async () => {
    await server?.stop();
  });

  it('are not read beyond the failed sign-in budget of the address; a sign-in gives its attempt back', async () => {
    const metadata = await spMetadata(server);
    // A good answer signs in and does not count.
    const good = await post(
      server,
      await idp.answer(await authUrl(server), metadata, { email: 'ok@example.com' }),
    );
    expect(good.code).to.be.a('string');
    for (let i = 0; i < 3; i++) expect((await post(server, 'not a SAML answer')).error).to.equal('invalid');
    // Beyond the budget the answer is not read: even a valid one is turned away until the window ends.
    const valid = await idp.answer(await authUrl(server), metadata, { email: 'ok@example.com' });
    expect(await post(server, 'not a SAML answer')).to.deep.equal({ status: 303, error: 'busy' });
    expect(await post(server, valid)).to.deep.equal({ status: 303, error: 'busy' });
    // Password sign-ins count on their own.
    expect(
      (await server.api('POST', '/api/login', { body: { username: 'nobody', password: 'x' } })).status,
    ).to.equal(401);
  });
});

describe('SAML outside the enterprise edition', function () {
  this.timeout(60_000);
  let server: TestServer;
  before(async () => {
    server = await startServer({ edition: 'community', ssh: false });
  });
  after(async () => {
    await server?.stop();
  });

  it('answers 501 to every SAML call and reports saml off', async () => {
    expect((await server.api('GET', '/info')).body.authentication).to.deep.equal({
      local: true,
      saml: false,
    });
    const calls: [string, string, unknown?][] = [
      ['GET', '/api/user/saml/auth'],
      ['POST', '/api/user/saml/acs', { SAMLResponse: 'x' }],
      ['POST', '/api/user/saml/token', { code: 'x'.repeat(43) }],
      ['GET', '/api/user/saml/metadata'],
      ['GET', '/api/admin/saml'],
      ['PUT', '/api/admin/saml', { enabled: true }],
    ];
    for (const [method, path, body] of calls) {
      const res = await server.api(method, path, body ? { body } : {});
      expect(res.status, `${method} ${path}`).to.equal(501);
      expect(res.body.message).to.match(/enterprise/);
    }
  });
});

/** A user who is not an instance administrator. */
async function signUp(server: TestServer): Promise<LoginAnswer> {
  const admin = await server.login('ada', 'correct-horse');
  const made = await server.api('POST', '/api/admin/users', {
    token: admin.token,
    body: { name: 'Plain User', username: 'plain', email: 'plain@example.com', password: 'plain-pass' },
  });
  expect(made.status, JSON.stringify(made.body)).to.be.oneOf([200, 201]);
  return server.login('plain', 'plain-pass');
}
