import { expect } from 'chai';
import { startSamlServer, TestIdp } from '../../support/saml-idp';
import { type LoginAnswer, startServer, type TestServer } from '../../support/server';

const shared = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL);

/** Posts an answer to the assertion consumer (with RelayState when given); answers where it sent the browser. */
async function post(url: string, samlResponse: string, relayState?: string): Promise<string> {
  const form: Record<string, string> = { SAMLResponse: samlResponse };
  if (relayState !== undefined) form.RelayState = relayState;
  const res = await fetch(`${url}/api/user/saml/acs`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
    redirect: 'manual',
  });
  expect(res.status).to.equal(303);
  return res.headers.get('location') ?? '';
}

function codeOf(location: string): string {
  const code = /#sso=([A-Za-z0-9_-]+)$/.exec(location)?.[1];
  expect(code, `signed in: ${location}`).to.be.a('string');
  return code as string;
}

describe('SAML: return path, SSO accounts, IdP-initiated sign-in', function () {
  this.timeout(120_000);
  let server: TestServer;
  let admin: LoginAnswer;
  let idp: TestIdp;
  let publicUrl: string;
  let metadata: string;

  before(async () => {
    idp = new TestIdp();
    ({ server, publicUrl } = await startSamlServer());
    admin = await server.setup();
    await configure({ enabled: true, idp_metadata_xml: idp.metadata() });
    metadata = await (await fetch(`${server.url}/api/user/saml/metadata`)).text();
  });
  after(async () => {
    await server?.stop();
  });

  async function configure(body: Record<string, unknown>) {
    const res = await server.api('PUT', '/api/admin/saml', { token: admin.token, body });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body;
  }

  async function start(returnTo?: string) {
    const query = returnTo === undefined ? '' : `?return_to=${encodeURIComponent(returnTo)}`;
    return server.api('GET', `/api/user/saml/auth${query}`);
  }

  async function exchange(location: string) {
    const res = await server.api('POST', '/api/user/saml/token', { body: { code: codeOf(location) } });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body;
  }

  describe('the page a person was going to', () => {
    it('comes back after the sign-in: it travels in RelayState and the consumer lands there with the code', async () => {
      const started = await start('/devices/abc?tab=info');
      expect(started.status, JSON.stringify(started.body)).to.equal(200);
      const url = new URL(started.body.url as string);
      expect(url.searchParams.get('RelayState')).to.equal('/devices/abc?tab=info');
      const answer = await idp.answer(url.toString(), metadata, { email: 'back@example.com' });
      const location = await post(server.url, answer, '/devices/abc?tab=info');
      expect(location).to.match(/^\/devices\/abc\?tab=info#sso=[A-Za-z0-9_-]+$/);
      expect((await exchange(location)).email).to.equal('back@example.com');
    });

    it('without one, starts with no RelayState and lands on Home', async () => {
      const started = await start();
      expect(started.status).to.equal(200);
      const url = new URL(started.body.url as string);
      expect(url.searchParams.has('RelayState')).to.equal(false);
      const location = await post(
        server.url,
        await idp.answer(url.toString(), metadata, { email: 'home@example.com' }),
      );
      expect(location).to.match(/^\/#sso=/);
    });

    const hostile = [
      '//evil.example/devices',
      '/\\evil.example',
      '\\\\evil.example',
      'https://evil.example/',
      'javascript:alert(1)',
      'devices/abc',
      '/devices//evil.example',
      '/\t/evil.example',
      '/devices\n/x',
      '/devices#sso=forged',
      '/api/user/saml/token',
      '',
      `/${'a'.repeat(600)}`,
    ];

    it('refuses a start whose return path is not a page of this console (400, never an open redirect)', async () => {
      for (const value of hostile) {
        const res = await start(value);
        expect(res.status, JSON.stringify(value)).to.equal(400);
        expect(JSON.stringify(res.body), JSON.stringify(value)).to.include('return_to');
      }
    });

    it('lands on Home when the RelayState coming back is not a console path (it is not signed)', async () => {
      for (const value of hostile) {
        const url = (await start()).body.url as string;
        const answer = await idp.answer(url, metadata, { email: 'relay@example.com' });
        const location = await post(server.url, answer, value);
        expect(location, JSON.stringify(value)).to.match(/^\/#sso=[A-Za-z0-9_-]+$/);
      }
      // A refusal goes to the page too, and to Home when the page is hostile.
      const url = (await start()).body.url as string;
      const late = await idp.answer(url, metadata, {
        email: 'relay@example.com',
        notOnOrAfter: new Date(Date.now() - 10 * 60_000),
      });
      expect(await post(server.url, late, '//evil.example')).to.equal('/#sso-error=expired');
    });
  });

  describe('accounts made by single sign-on', () => {
    it('have origin saml, and the server refuses to change a password they do not have (403)', async () => {
      const url = (await start()).body.url as string;
      const auth = await exchange(
        await post(server.url, await idp.answer(url, metadata, { email: 'made@example.com' })),
      );
      expect(auth.origin).to.equal('saml');
      const me = await server.api('GET', '/api/auth/user', { token: auth.token });
      expect(me.body.origin).to.equal('saml');
      const change = await server.api('PATCH', '/api/users', {
        token: auth.token,
        body: { password: 'new-pass-1', current_password: 'anything' },
      });
      expect(change.status).to.equal(403);
      expect(change.body.message).to.match(/identity provider/);
      const old = await server.api('PATCH', `/api/users/${auth.id}/password`, {
        token: auth.token,
        body: { current_password: 'anything', new_password: 'new-pass-1' },
      });
      expect(old.status).to.equal(403);
      // Their profile is theirs to change still.
      const name = await server.api('PATCH', '/api/users', {
        token: auth.token,
        body: { name: 'Made Here' },
      });
      expect(name.status).to.equal(200);
      expect(name.body).to.include({ name: 'Made Here', origin: 'saml' });
    });

    it('a local account that signs in through SAML stays local, with its password', async () => {
      const url = (await start()).body.url as string;
      const auth = await exchange(
        await post(server.url, await idp.answer(url, metadata, { email: 'ada@example.com' })),
      );
      expect(auth).to.include({ id: admin.id, origin: 'local' });
      expect((await server.login('ada', 'correct-horse')).origin).to.equal('local');
    });
  });

  describe('single logout (the IdP offers an HTTP-Redirect address)', () => {
    async function signedIn(email: string) {
      const url = (await start()).body.url as string;
      return exchange(await post(server.url, await idp.answer(url, metadata, { email })));
    }
    const alive = async (token: string) => (await server.api('GET', '/api/auth/user', { token })).status;
    const follow = async (url: string) => {
      const res = await fetch(url, { redirect: 'manual' });
      expect(res.status, url).to.equal(303);
      return res.headers.get('location') ?? '';
    };

    it('publishes its single logout address in the metadata, and the IdP address in the settings', async () => {
      expect(metadata).to.include(
        `<SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${publicUrl}/api/user/saml/slo"`,
      );
      const view = await server.api('GET', '/api/admin/saml', { token: admin.token });
      expect(view.body.idp.slo_url).to.equal('https://idp.test.example/slo');
    });

    it('signs out of Gatehouse and sends the browser to the IdP with a LogoutRequest; its answer lands on the console', async () => {
      const auth = await signedIn('leaving@example.com');
      const other = await signedIn('staying@example.com');
      const out = await server.api('POST', '/api/user/saml/logout', { token: auth.token });
      expect(out.status).to.equal(200);
      const url = new URL(out.body.url as string);
      expect(`${url.origin}${url.pathname}`).to.equal('https://idp.test.example/slo');
      expect(url.searchParams.get('SAMLRequest')).to.be.a('string');
      expect(await alive(auth.token)).to.equal(401);
      expect(await alive(other.token)).to.equal(200);
      const answer = await idp.logoutResponse(url.toString(), metadata);
      expect(idp.logouts.at(-1)?.nameID).to.equal('leaving@example.com');
      expect(idp.logouts.at(-1)?.sessionIndex).to.match(/^_s[0-9a-f]+$/);
      expect(answer.startsWith(`${publicUrl}/api/user/saml/slo?SAMLResponse=`)).to.equal(true);
      expect(await follow(answer.replace(publicUrl, server.url))).to.equal('/');
      // A LogoutResponse whose signature does not hold is refused.
      const forged = new URL(answer.replace(publicUrl, server.url));
      forged.searchParams.set('Signature', Buffer.alloc(256, 1).toString('base64'));
      expect(await follow(forged.toString())).to.equal('/#sso-error=signature');
    });

    it("ends every sign-in of the person the IdP's signed LogoutRequest names, and answers it", async () => {
      const first = await signedIn('twice@example.com');
      const second = await signedIn('twice@example.com');
      const other = await signedIn('staying@example.com');
      const request = idp.logoutRequest(metadata, 'twice@example.com').replace(publicUrl, server.url);
      // Unsigned, it ends nothing.
      const unsigned = new URL(request);
      unsigned.searchParams.delete('Signature');
      unsigned.searchParams.delete('SigAlg');
      expect(await follow(unsigned.toString())).to.equal('/#sso-error=signature');
      expect(await alive(first.token)).to.equal(200);
      const back = new URL(await follow(request));
      expect(`${back.origin}${back.pathname}`).to.equal('https://idp.test.example/slo');
      expect(back.searchParams.get('SAMLResponse')).to.be.a('string');
      expect(await alive(first.token)).to.equal(401);
      expect(await alive(second.token)).to.equal(401);
      expect(await alive(other.token)).to.equal(200);
    });

    it('ends a password sign-in with no IdP address, and refuses a message that is neither (400)', async () => {
      const local = await server.login('ada', 'correct-horse');
      const out = await server.api('POST', '/api/user/saml/logout', { token: local.token });
      expect(out.status).to.equal(200);
      expect(out.body.url).to.equal('');
      expect(await alive(local.token)).to.equal(401);
      expect((await server.api('GET', '/api/user/saml/slo')).status).to.equal(400);
      expect((await server.api('GET', '/api/user/saml/slo?SAMLRequest=x&SAMLResponse=y')).status).to.equal(
        400,
      );
      const junk = await fetch(`${server.url}/api/user/saml/slo?SAMLResponse=bm90IHhtbA&Signature=eA`, {
        redirect: 'manual',
      });
      expect(junk.status).to.equal(303);
      expect(junk.headers.get('location')).to.match(/^\/#sso-error=[a-z]+$/);
    });
  });

  describe('IdP-initiated sign-in', () => {
    it('is off by default: an unsolicited answer is refused with sso-error=unsolicited', async () => {
      const view = await server.api('GET', '/api/admin/saml', { token: admin.token });
      expect(view.body.idp_initiated).to.equal(false);
      const answer = await idp.unsolicited(metadata, { email: 'tile@example.com' });
      expect(await post(server.url, answer)).to.equal('/#sso-error=unsolicited');
    });

    describe('turned on by an administrator', () => {
      before(async () => {
        const view = await configure({
          enabled: true,
          idp_metadata_xml: idp.metadata(),
          idp_initiated: true,
        });
        expect(view.idp_initiated).to.equal(true);
      });
      after(() => configure({ enabled: true, idp_metadata_xml: idp.metadata() }));

      it('accepts an unsolicited answer once, at the page its RelayState names; a replay is refused', async () => {
        const answer = await idp.unsolicited(metadata, { email: 'tile@example.com' });
        const location = await post(server.url, answer, '/devices');
        expect(location).to.match(/^\/devices#sso=/);
        expect((await exchange(location)).email).to.equal('tile@example.com');
        expect(await post(server.url, answer)).to.equal('/#sso-error=replay');
      });

      it('still checks a solicited answer against its request', async () => {
        const url = (await start()).body.url as string;
        const answer = await idp.answer(url, metadata, { email: 'tile@example.com' });
        expect(await post(server.url, answer)).to.match(/^\/#sso=/);
        // Its request was used up: the copy answers nothing waited for, as with the setting off.
        expect(await post(server.url, answer)).to.equal('/#sso-error=request');
      });

      it('refuses an unsolicited answer issued more than 5 minutes ago, even one still within NotOnOrAfter', async () => {
        const answer = await idp.unsolicited(metadata, {
          email: 'tile@example.com',
          issuedAt: new Date(Date.now() - 10 * 60_000),
          notBefore: new Date(Date.now() - 11 * 60_000),
          notOnOrAfter: new Date(Date.now() + 5 * 60_000),
        });
        expect(await post(server.url, answer)).to.equal('/#sso-error=expired');
      });

      it('refuses an unsolicited answer whose signature does not hold', async () => {
        const other = new TestIdp({ entityId: idp.entityId });
        const answer = await other.unsolicited(metadata, { email: 'tile@example.com' });
        expect(await post(server.url, answer)).to.equal('/#sso-error=signature');
      });

      describe('with a second instance (pending without TEST_DATABASE_URL and TEST_REDIS_URL)', () => {
        let second: TestServer;
        before(async function () {
          if (!shared) this.skip();
          second = await startServer({
            edition: 'enterprise',
            ssh: false,
            sharing: server,
            overrides: { publicUrl },
          });
        });
        after(async () => second?.stop());

        it('refuses on the other instance an answer already used on this one', async () => {
          const answer = await idp.unsolicited(metadata, { email: 'tile@example.com' });
          expect(await post(server.url, answer)).to.match(/^\/#sso=/);
          expect(await post(second.url, answer)).to.equal('/#sso-error=replay');
          const fresh = await idp.unsolicited(metadata, { email: 'tile@example.com' });
          expect(await post(second.url, fresh)).to.match(/^\/#sso=/);
          expect(await post(server.url, fresh)).to.equal('/#sso-error=replay');
        });
      });
    });
  });
});
