import { expect } from 'chai';
import { totpCode } from '../../plugins/community/mfa/totp';
import { signUp } from '../integration/cloud/mail';
import { postAnswer, TestIdp } from '../support/saml-idp';
import { type LoginAnswer, startServer, type TestServer } from '../support/server';
import { startSmtp, type TestSmtp } from '../support/smtp';

const PASSWORD = 'sign-up_Pass1';

/**
 * `DELETE /api/user` (cloud) asked for nothing but the token: whoever held a copy of it deleted the account, the
 * namespaces it owns with their members' access, and ended their billing, without a word of what would go. It now
 * asks for the password (and a current code when two-step verification is on), takes the list of namespaces that
 * go, which must be exactly those owned, and `GET /api/user/deletion` says beforehand what goes. An account made by
 * single sign-on, whose person knows no password, confirms with a single sign-on made within the last 5 minutes.
 */
describe('security: deleting an account (cloud)', function () {
  this.timeout(120_000);
  let smtp: TestSmtp;
  let server: TestServer;
  let admin: LoginAnswer;
  let idp: TestIdp;

  before(async () => {
    smtp = await startSmtp();
    idp = new TestIdp();
    server = await startServer({
      edition: 'cloud',
      ssh: false,
      overrides: {
        smtp: { url: smtp.url, from: 'Gatehouse <gh@test>' },
        limits: { registrationsPerMinute: 1000, maxNamespaces: -1 },
        auth: { lockoutThreshold: 3 },
      },
    });
    admin = await server.setup();
  });
  after(async () => {
    await server?.stop();
    await smtp?.stop();
  });

  const db = () => server.kernel.container.cradle.db;
  const exists = async (table: string, where: Record<string, string>) =>
    (await db()(table).where(where).first()) !== undefined;
  const namespace = async (owner: LoginAnswer, name: string) => {
    const res = await server.api('POST', '/api/namespaces', { token: owner.token, body: { name } });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.tenant_id as string;
  };
  const remove = (token: string, body?: unknown) =>
    server.api('DELETE', '/api/user', { token, ...(body === undefined ? {} : { body }) });

  it('says beforehand what goes: owned namespaces with their members and devices, and memberships', async () => {
    const owner = await signUp(server, smtp, 'previewed');
    const own = await namespace(owner, 'previewed-ns');
    const friend = await signUp(server, smtp, 'friend');
    const theirs = await namespace(friend, 'friend-ns');
    await db()('namespace_members').insert([
      { tenant_id: own, user_id: friend.id, role: 'operator' },
      { tenant_id: theirs, user_id: owner.id, role: 'observer' },
    ]);
    const preview = await server.api('GET', '/api/user/deletion', { token: owner.token });
    expect(preview.status, JSON.stringify(preview.body)).to.equal(200);
    expect(preview.body).to.deep.equal({
      namespaces: [
        { tenant_id: own, name: 'previewed-ns', devices: 0, members: 1, subscription: 'inactive' },
      ],
      memberships: [{ tenant_id: theirs, name: 'friend-ns', role: 'observer' }],
      confirm: { password: true, code: false },
    });
  });

  it('refuses without the password or with a wrong one, and locks out repeated guesses; nothing goes', async () => {
    const owner = await signUp(server, smtp, 'guarded');
    const own = await namespace(owner, 'guarded-ns');
    const refusals = [
      await remove(owner.token),
      await remove(owner.token, {}),
      await remove(owner.token, { namespaces: [own] }),
    ];
    expect(refusals.map((r) => [r.status, r.body])).to.deep.equal([
      [400, ['namespaces']],
      [400, ['namespaces']],
      [400, ['password']],
    ]);
    const guesses = [];
    for (const password of ['wrong-1', 'wrong-2', 'wrong-3', PASSWORD])
      guesses.push(await remove(owner.token, { namespaces: [own], password }));
    // The third wrong one locks, as at sign-in; then even the right password waits for the lock's end.
    expect(guesses.map((g) => g.status)).to.deep.equal([403, 403, 429, 429]);
    expect(Number(guesses[3]?.headers.get('x-account-lockout'))).to.be.greaterThan(Date.now() / 1000);
    expect(await exists('users', { id: owner.id })).to.equal(true);
    expect(await exists('namespaces', { tenant_id: own })).to.equal(true);
  });

  it('deletes only what the caller named: a namespace it does not know of keeps the account', async () => {
    const owner = await signUp(server, smtp, 'named');
    const first = await namespace(owner, 'named-first');
    const preview = (await server.api('GET', '/api/user/deletion', { token: owner.token })).body;
    // Another namespace since the preview (or a list made up): the answer names the field, nothing goes.
    const later = await namespace(owner, 'named-later');
    const listed = preview.namespaces.map((n: { tenant_id: string }) => n.tenant_id);
    for (const namespaces of [listed, [], [first, later, '00000000-0000-4000-8000-000000000001']]) {
      const res = await remove(owner.token, { namespaces, password: PASSWORD });
      expect(res.status, JSON.stringify(namespaces)).to.equal(409);
      expect(res.body).to.deep.equal(['namespaces']);
    }
    expect(await exists('namespaces', { tenant_id: first })).to.equal(true);
    const done = await remove(owner.token, { namespaces: [later, first], password: PASSWORD });
    expect(done.status, JSON.stringify(done.body)).to.equal(204);
    expect(await exists('users', { id: owner.id })).to.equal(false);
    expect(await exists('namespaces', { tenant_id: first })).to.equal(false);
    expect(await exists('namespaces', { tenant_id: later })).to.equal(false);
  });

  it('asks for a current code when two-step verification is on', async () => {
    const owner = await signUp(server, smtp, 'twostep');
    await server.api('PATCH', '/api/users', {
      token: owner.token,
      body: { recovery_email: 'twostep@backup.example' },
    });
    const gen = await server.api('GET', '/api/user/mfa/generate', { token: owner.token });
    const enabled = await server.api('PUT', '/api/user/mfa/enable', {
      token: owner.token,
      body: {
        code: totpCode(gen.body.secret, Date.now() / 1000),
        secret: gen.body.secret,
        recovery_codes: gen.body.recovery_codes,
      },
    });
    expect(enabled.status, JSON.stringify(enabled.body)).to.equal(200);
    const preview = await server.api('GET', '/api/user/deletion', { token: owner.token });
    expect(preview.body.confirm).to.deep.equal({ password: true, code: true });
    const body = { namespaces: [], password: PASSWORD };
    expect((await remove(owner.token, body)).body).to.deep.equal(['code']);
    expect((await remove(owner.token, { ...body, code: '000000' })).body).to.deep.equal(['code']);
    expect(await exists('users', { id: owner.id })).to.equal(true);
    // The next time step's code: the one that enabled MFA is spent.
    const code = totpCode(gen.body.secret, Date.now() / 1000 + 30);
    expect((await remove(owner.token, { ...body, code })).status).to.equal(204);
    expect(await exists('users', { id: owner.id })).to.equal(false);
  });

  describe('an account made by single sign-on', () => {
    before(async () => {
      const res = await server.api('PUT', '/api/admin/saml', {
        token: admin.token,
        body: { enabled: true, idp_metadata_xml: idp.metadata() },
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
    });

    /** A sign-in through the IdP, as the console makes it: start, the IdP's answer, the one-time code. */
    const singleSignOn = async (email: string): Promise<LoginAnswer> => {
      const start = await server.api('GET', '/api/user/saml/auth');
      const metadata = await (await fetch(`${server.url}/api/user/saml/metadata`)).text();
      const answer = await idp.answer(start.body.url, metadata, { email, name: 'Sso Person' });
      const code = /#sso=([A-Za-z0-9_-]+)$/.exec(await postAnswer(server.url, answer))?.[1];
      const auth = await server.api('POST', '/api/user/saml/token', { body: { code } });
      expect(auth.status, JSON.stringify(auth.body)).to.equal(200);
      return auth.body as LoginAnswer;
    };

    it('confirms with a single sign-on of the last 5 minutes instead of a password', async () => {
      const person = await singleSignOn('sso.leaver@example.com');
      const preview = await server.api('GET', '/api/user/deletion', { token: person.token });
      expect(preview.body.confirm).to.deep.equal({ password: false, code: false });
      // The same person's older sign-in, whose single sign-on is no longer recent, must sign in again first.
      const older = await singleSignOn('sso.leaver@example.com');
      const claims = JSON.parse(Buffer.from(older.token.split('.')[1] as string, 'base64url').toString());
      await server.kernel.container.cradle.cache.del(`sign-in:sso:${claims.sid}`);
      const stale = await remove(older.token, { namespaces: [] });
      expect(stale.status).to.equal(400);
      expect(stale.body).to.deep.equal(['password']);
      expect((await remove(person.token, { namespaces: [] })).status).to.equal(204);
      expect(await exists('users', { id: person.id })).to.equal(false);
    });
  });
});
