import { PaymentRequired } from '@gatehouse/core';
import { expect } from 'chai';
import { startServer, type TestServer } from '../../support/server';
import { startSmtp, type TestSmtp } from '../../support/smtp';
import { linkIn, mailCount, signUp } from './mail';

describe('cloud: sign-up, verification, password recovery and account deletion', function () {
  this.timeout(120_000);
  let server: TestServer;
  let smtp: TestSmtp;
  before(async () => {
    smtp = await startSmtp();
    server = await startServer({
      edition: 'cloud',
      ssh: false,
      overrides: { smtp: { url: smtp.url, from: 'Gatehouse <gh@test>' }, publicUrl: 'https://cloud.test' },
    });
    await server.setup();
  });
  after(async () => {
    await server?.stop();
    await smtp?.stop();
  });

  const register = (body: Record<string, unknown>) => server.api('POST', '/api/register', { body });

  it('signs up, refuses sign-in until the mailed link verifies the address, and spends the link once', async () => {
    const mail = smtp.waitFor('grace@example.com');
    const res = await register({
      name: 'Grace Hopper',
      email: 'Grace@Example.com',
      username: 'grace',
      password: 'cobol_1959',
      email_marketing: true,
    });
    expect(res.status).to.equal(200);
    const received = await mail;
    expect(received.subject).to.equal('Gatehouse: confirm your e-mail address');
    const link = linkIn(received, '/validation_account');
    expect(link.origin).to.equal('https://cloud.test');
    expect(link.searchParams.get('email')).to.equal('grace@example.com');

    const early = await server.api('POST', '/api/login', {
      body: { username: 'grace', password: 'cobol_1959' },
    });
    expect(early.status).to.equal(403);
    expect(early.body.code).to.equal('email_unverified');
    expect(early.body.message).to.match(/not verified yet.*grace@example\.com/);
    // The wrong password does not learn that the account is unverified.
    const wrong = await server.api('POST', '/api/login', {
      body: { username: 'grace', password: 'nope-nope' },
    });
    expect(wrong.status).to.equal(401);

    const forged = await server.api(
      'GET',
      `/api/user/validation_account?email=grace%40example.com&token=${'A'.repeat(43)}`,
    );
    expect(forged.status).to.equal(400);
    expect(forged.body).to.deep.equal(['token']);
    const ok = await server.api('GET', `/api/user/validation_account${link.search}`);
    expect(ok.status).to.equal(200);
    const again = await server.api('GET', `/api/user/validation_account${link.search}`);
    expect(again.status).to.equal(400);

    const login = await server.login('grace', 'cobol_1959');
    expect(login).to.include({ user: 'grace', email: 'grace@example.com', tenant: '', max_namespaces: 1 });
    const row = await server.kernel.container.cradle.db('users').where({ id: login.id }).first();
    expect(row.email_marketing).to.equal(true);
    const stored = await server.kernel.container.cradle.db('account_tokens').where({ user_id: login.id });
    expect(stored).to.have.length(0);
    // A free cloud account owns one namespace.
    const first = await server.api('POST', '/api/namespaces', {
      token: login.token,
      body: { name: 'grace-ns' },
    });
    expect(first.status).to.equal(200);
    const second = await server.api('POST', '/api/namespaces', {
      token: login.token,
      body: { name: 'grace-2' },
    });
    expect(second.status).to.equal(403);
  });

  it('checks the sign-up fields and answers 409 naming what is taken', async () => {
    await signUp(server, smtp, 'taken');
    const bad = await register({ name: 'ab', email: 'not-an-email', username: 'x', password: 'has space!' });
    expect(bad.status).to.equal(400);
    expect(bad.body).to.have.members(['name', 'email', 'username', 'password']);
    const long = await register({
      name: 'Long Pass',
      email: 'long@example.com',
      username: 'longpass',
      password: 'a'.repeat(65),
    });
    expect(long.status).to.equal(400);
    expect(long.body).to.deep.equal(['password']);
    const clash = await register({
      name: 'Taken',
      email: 'TAKEN@example.com',
      username: 'Taken',
      password: 'abcde-12',
    });
    expect(clash.status).to.equal(409);
    expect(clash.body).to.have.members(['username', 'email']);
  });

  it('mails the verification again only to an account not verified yet, and the new link replaces the old', async () => {
    const first = smtp.waitFor('resend@example.com');
    await register({
      name: 'Re Send',
      email: 'resend@example.com',
      username: 'resend',
      password: 'resend-1',
    });
    const old = linkIn(await first, '/validation_account');
    const before = await mailCount(server, smtp);
    for (const username of ['nobody-here', 'taken']) {
      const res = await server.api('POST', '/api/user/resend_email', { body: { username } });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({});
    }
    expect(await mailCount(server, smtp)).to.equal(before);
    const second = smtp.waitFor('resend@example.com');
    const res = await server.api('POST', '/api/user/resend_email', {
      body: { username: 'resend@example.com' },
    });
    expect(res.status).to.equal(200);
    const fresh = linkIn(await second, '/validation_account');
    expect((await server.api('GET', `/api/user/validation_account${old.search}`)).status).to.equal(400);
    expect((await server.api('GET', `/api/user/validation_account${fresh.search}`)).status).to.equal(200);
  });

  it('recovers a password by username or e-mail with a single-use, expiring, hashed token', async () => {
    const me = await signUp(server, smtp, 'forgetful');
    const before = await mailCount(server, smtp);
    const unknown = await server.api('POST', '/api/user/recover_password', {
      body: { username: 'no-such-user' },
    });
    expect(unknown.status).to.equal(200);
    expect(await mailCount(server, smtp)).to.equal(before);

    const mail = smtp.waitFor('forgetful@example.com');
    const res = await server.api('POST', '/api/user/recover_password', { body: { username: 'forgetful' } });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({});
    const link = linkIn(await mail, '/reset-password');
    expect(link.searchParams.get('uid')).to.equal(me.id);
    const token = link.searchParams.get('token') as string;
    const row = await server.kernel.container.cradle.db('account_tokens').where({ user_id: me.id }).first();
    expect(row.purpose).to.equal('recover');
    expect(row.digest).to.match(/^[0-9a-f]{64}$/);
    expect(row.digest).to.not.contain(token);

    const wrongUser = await server.api('POST', `/api/user/${'0'.repeat(24)}/update_password`, {
      body: { password: 'new-secret', token },
    });
    expect(wrongUser.status).to.equal(400);
    expect(wrongUser.body).to.deep.equal(['token']);
    const ok = await server.api('POST', `/api/user/${me.id}/update_password`, {
      body: { password: 'new-secret', token },
    });
    expect(ok.status).to.equal(200);
    const reused = await server.api('POST', `/api/user/${me.id}/update_password`, {
      body: { password: 'other-secret', token },
    });
    expect(reused.status).to.equal(400);
    // The older session ended with the old password.
    expect((await server.api('GET', '/api/auth/user', { token: me.token })).status).to.equal(401);
    await server.login('forgetful', 'new-secret');

    const byMail = smtp.waitFor('forgetful@example.com');
    await server.api('POST', '/api/user/recover_password', { body: { username: 'FORGETFUL@example.com' } });
    const expiring = linkIn(await byMail, '/reset-password');
    await server.kernel.container.cradle
      .db('account_tokens')
      .where({ user_id: me.id })
      .update({ expires_at: new Date(Date.now() - 1000) });
    const late = await server.api('POST', `/api/user/${me.id}/update_password`, {
      body: { password: 'late-secret', token: expiring.searchParams.get('token') },
    });
    expect(late.status).to.equal(400);
  });

  it('limits the messages one address can ask for: 429 with Retry-After, for existing and unknown names alike', async () => {
    for (const username of ['limited-unknown', 'taken']) {
      const answers: number[] = [];
      for (let i = 0; i < 4; i++) {
        answers.push((await server.api('POST', '/api/user/recover_password', { body: { username } })).status);
      }
      expect(answers).to.deep.equal([200, 200, 200, 429]);
    }
    const res = await server.api('POST', '/api/user/resend_email', { body: { username: 'rl-x' } });
    expect(res.status).to.equal(200);
    const limited = await server.api('POST', '/api/user/recover_password', { body: { username: 'taken' } });
    expect(limited.status).to.equal(429);
    expect(Number(limited.headers.get('retry-after'))).to.be.within(1, 900);
  });

  it('deletes the account with the namespaces it owns, after account.beforeDelete lets it', async () => {
    const owner = await signUp(server, smtp, 'leaving');
    const ns = await server.api('POST', '/api/namespaces', {
      token: owner.token,
      body: { name: 'leaving-ns' },
    });
    const tenant = ns.body.tenant_id as string;
    const other = await signUp(server, smtp, 'staying');
    const kept = await server.api('POST', '/api/namespaces', {
      token: other.token,
      body: { name: 'staying-ns' },
    });
    const keptTenant = kept.body.tenant_id as string;
    // A member of another namespace: the membership goes, the namespace stays.
    const db = server.kernel.container.cradle.db;
    await db('namespace_members').insert({ tenant_id: keptTenant, user_id: owner.id, role: 'observer' });

    let unsettled = true;
    const seen: string[][] = [];
    server.kernel.hooks.on('account.beforeDelete', ({ userId, tenantIds }) => {
      if (userId !== owner.id) return;
      seen.push(tenantIds);
      if (unsettled) throw new PaymentRequired('an invoice is still open');
    });
    const confirmed = { namespaces: [tenant], password: 'sign-up_Pass1' };
    const refused = await server.api('DELETE', '/api/user', { token: owner.token, body: confirmed });
    expect(refused.status).to.equal(402);
    expect(await db('namespaces').where({ tenant_id: tenant }).first()).to.not.equal(undefined);
    unsettled = false;
    const res = await server.api('DELETE', '/api/user', { token: owner.token, body: confirmed });
    expect(res.status).to.equal(204);
    expect(res.body).to.equal(undefined);
    expect(seen).to.deep.equal([[tenant], [tenant]]);
    expect(await db('namespaces').where({ tenant_id: tenant }).first()).to.equal(undefined);
    expect(await db('users').where({ id: owner.id }).first()).to.equal(undefined);
    expect(await db('namespaces').where({ tenant_id: keptTenant }).first()).to.not.equal(undefined);
    expect(await db('namespace_members').where({ user_id: owner.id })).to.have.length(0);
    expect((await server.api('GET', '/api/auth/user', { token: owner.token })).status).to.equal(401);
    const login = await server.api('POST', '/api/login', {
      body: { username: 'leaving', password: 'sign-up_Pass1' },
    });
    expect(login.status).to.equal(401);
    expect((await server.api('DELETE', '/api/user')).status).to.equal(401);
  });
});
