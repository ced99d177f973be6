import { expect } from 'chai';
import { postAnswer, selfSigned, TestIdp } from '../support/saml-idp';
import { startServer, type TestServer } from '../support/server';

const RSA_SHA1 = 'http://www.w3.org/2000/09/xmldsig#rsa-sha1';

/** Where the assertion consumer sent the browser: a one-time code, or the reason of a refusal. */
async function signInThrough(server: TestServer, idp: TestIdp, email: string) {
  const start = await server.api('GET', '/api/user/saml/auth');
  expect(start.status, JSON.stringify(start.body)).to.equal(200);
  const metadata = await (await fetch(`${server.url}/api/user/saml/metadata`)).text();
  const answer = await idp.answer(start.body.url, metadata, { email, name: 'Old Idp User' });
  return postAnswer(server.url, answer);
}

/**
 * SAML answers signed (and digested) with SHA-1 were accepted: SHA-1 collisions are practical, so such a signature
 * no longer proves the IdP wrote the document. They are refused unless `saml.allowSha1` is set for an old IdP.
 */
describe('security: SAML answers signed with SHA-1', function () {
  this.timeout(120_000);
  const keys = selfSigned('sha1-idp');
  const old = new TestIdp({ keys, signatureAlgorithm: RSA_SHA1 });
  const current = new TestIdp({ keys });

  for (const allowSha1 of [false, true])
    describe(allowSha1 ? 'with saml.allowSha1' : 'by default', () => {
      let server: TestServer;
      before(async () => {
        server = await startServer({
          edition: 'enterprise',
          ssh: false,
          overrides: { saml: { allowSha1 } },
        });
        const admin = await server.setup();
        const res = await server.api('PUT', '/api/admin/saml', {
          token: admin.token,
          body: { enabled: true, idp_metadata_xml: old.metadata() },
        });
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
      });
      after(async () => {
        await server?.stop();
      });

      it(
        allowSha1 ? 'accepts an answer signed with SHA-1' : 'refuses an answer signed with SHA-1',
        async () => {
          const landing = await signInThrough(server, old, `sha1-${allowSha1}@example.com`);
          if (allowSha1) expect(landing).to.match(/^\/#sso=[A-Za-z0-9_-]+$/);
          else expect(landing).to.equal('/#sso-error=weak');
          const users = await server.kernel.container.cradle
            .db('users')
            .where({ email: `sha1-${allowSha1}@example.com` });
          expect(users).to.have.length(allowSha1 ? 1 : 0);
        },
      );

      it('accepts an answer signed with SHA-256', async () => {
        expect(await signInThrough(server, current, `sha256-${allowSha1}@example.com`)).to.match(
          /^\/#sso=[A-Za-z0-9_-]+$/,
        );
      });
    });
});
