import { expect } from 'chai';
import { base32Decode, hotp, totpCode, totpStep } from '../../../plugins/community/mfa/totp';
import { startServer, type TestServer } from '../../support/server';
import { startSmtp, type TestSmtp } from '../../support/smtp';
import { createUser, PASSWORD } from './team';

/** Codes for the current and the next time step: both stay valid for at least 30 seconds from now. */
function codes(secret: string) {
  const now = Date.now() / 1000;
  return { now: totpCode(secret, now), next: totpCode(secret, now + 30) };
}

describe('accounts: multi-factor sign-in (TOTP) over a real SMTP server', function () {
  // Each user costs a password hash or two (scrypt, 32 MiB): slow on two busy cores and on PGlite.
  this.timeout(90_000);
  let server: TestServer;
  let smtp: TestSmtp;
  before(async () => {
    smtp = await startSmtp();
    server = await startServer({
      ssh: false,
      overrides: { smtp: { url: smtp.url, from: 'Gatehouse <gh@test>' } },
    });
    await server.setup();
  });
  after(async () => {
    await server?.stop();
    await smtp?.stop();
  });

  it('computes the RFC 6238 appendix B test vectors (SHA-1), so any authenticator app agrees', () => {
    const key = Buffer.from('12345678901234567890');
    const vectors: [number, string][] = [
      [59, '94287082'],
      [1111111109, '07081804'],
      [1111111111, '14050471'],
      [1234567890, '89005924'],
      [2000000000, '69279037'],
      [20000000000, '65353130'],
    ];
    for (const [t, code] of vectors) expect(hotp(key, totpStep(t), 8)).to.equal(code);
    expect(base32Decode('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ').toString()).to.equal('12345678901234567890');
  });

  /** Generates and enables MFA for a new user; returns what the app and the user hold. */
  async function enableMfa(username: string) {
    const me = await createUser(server, username);
    await server.api('PATCH', '/api/users', {
      token: me.token,
      body: { recovery_email: `${username}@backup.example` },
    });
    const gen = await server.api('GET', '/api/user/mfa/generate', { token: me.token });
    expect(gen.status).to.equal(200);
    const { secret, recovery_codes, link } = gen.body as {
      secret: string;
      recovery_codes: string[];
      link: string;
    };
    const c = codes(secret);
    const enabled = await server.api('PUT', '/api/user/mfa/enable', {
      token: me.token,
      body: { code: c.now, secret, recovery_codes },
    });
    expect(enabled.status, JSON.stringify(enabled.body)).to.equal(200);
    return { me, secret, recovery_codes, link, next: c.next };
  }

  it('generates an otpauth link, a base32 secret and recovery codes', async () => {
    const me = await createUser(server, 'mfa-gen');
    const gen = await server.api('GET', '/api/user/mfa/generate', { token: me.token });
    expect(gen.status).to.equal(200);
    expect(gen.body.secret).to.match(/^[A-Z2-7]{32}$/);
    expect(gen.body.recovery_codes).to.have.length(6);
    const link = new URL(gen.body.link);
    expect(link.protocol).to.equal('otpauth:');
    expect(link.searchParams.get('secret')).to.equal(gen.body.secret);
    expect(link.searchParams.get('issuer')).to.equal('Gatehouse');
    expect(decodeURIComponent(link.pathname)).to.include('mfa-gen@example.com');
  });

  it('refuses to enable without a recovery e-mail, with a wrong code, with a secret it did not give, or twice', async () => {
    const me = await createUser(server, 'mfa-refuse');
    const gen = (await server.api('GET', '/api/user/mfa/generate', { token: me.token })).body;
    const noRecovery = await server.api('PUT', '/api/user/mfa/enable', {
      token: me.token,
      body: { code: totpCode(gen.secret), secret: gen.secret, recovery_codes: gen.recovery_codes },
    });
    expect(noRecovery.status).to.equal(400);
    expect(noRecovery.body).to.deep.equal(['recovery_email']);
    await server.api('PATCH', '/api/users', {
      token: me.token,
      body: { recovery_email: 'refuse@backup.example' },
    });
    const otherSecret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
    const forged = await server.api('PUT', '/api/user/mfa/enable', {
      token: me.token,
      body: { code: totpCode(otherSecret), secret: otherSecret, recovery_codes: ['AAAAAAAAAA'] },
    });
    expect(forged.status).to.equal(400);
    const wrong = await server.api('PUT', '/api/user/mfa/enable', {
      token: me.token,
      body: {
        code: '000000' === totpCode(gen.secret) ? '111111' : '000000',
        secret: gen.secret,
        recovery_codes: gen.recovery_codes,
      },
    });
    expect(wrong.status).to.equal(400);
    expect(wrong.body).to.deep.equal(['code']);
    const again = await enableMfa('mfa-twice');
    const gen2 = (await server.api('GET', '/api/user/mfa/generate', { token: again.me.token })).body;
    const twice = await server.api('PUT', '/api/user/mfa/enable', {
      token: again.me.token,
      body: { code: totpCode(gen2.secret), secret: gen2.secret, recovery_codes: gen2.recovery_codes },
    });
    expect(twice.status).to.equal(409);
  });

  it('makes login answer 401 with X-MFA-Token, completed at /api/user/mfa/auth; a code works once', async () => {
    const { secret, next } = await enableMfa('mfa-login');
    const login = await server.api('POST', '/api/login', {
      body: { username: 'mfa-login', password: PASSWORD },
    });
    expect(login.status).to.equal(401);
    const mfaToken = login.headers.get('x-mfa-token');
    expect(mfaToken).to.be.a('string');
    expect(login.body).to.not.have.property('token');
    const asUser = await server.api('GET', '/api/auth/user', { token: mfaToken as string });
    expect(asUser.status, 'the MFA token is not a user token').to.equal(401);
    const done = await server.api('POST', '/api/user/mfa/auth', { body: { token: mfaToken, code: next } });
    expect(done.status).to.equal(200);
    expect(done.body).to.include({ user: 'mfa-login', mfa: true });
    const replay = await server.api('POST', '/api/user/mfa/auth', { body: { token: mfaToken, code: next } });
    expect(replay.status, 'the same code cannot be replayed').to.equal(401);
    expect(secret).to.be.a('string');
  });

  it('throttles wrong MFA codes: 429 with the lockout end after repeated failures', async () => {
    const { secret } = await enableMfa('mfa-brute');
    const login = await server.api('POST', '/api/login', {
      body: { username: 'mfa-brute', password: PASSWORD },
    });
    const token = login.headers.get('x-mfa-token');
    const valid = new Set([-30, 0, 30].map((d) => totpCode(secret, Date.now() / 1000 + d)));
    const wrong = ['000000', '111111', '222222', '333333', '444444'].filter((c) => !valid.has(c));
    const statuses: number[] = [];
    let lockHeader: string | null = null;
    for (const code of wrong.slice(0, 4)) {
      const res = await server.api('POST', '/api/user/mfa/auth', { body: { token, code } });
      statuses.push(res.status);
      if (res.status === 429) lockHeader = res.headers.get('x-account-lockout');
    }
    expect(statuses.slice(0, 2)).to.deep.equal([401, 401]);
    expect(statuses[2]).to.equal(429);
    expect(Number(lockHeader)).to.be.greaterThan(Date.now() / 1000);
    const right = await server.api('POST', '/api/user/mfa/auth', {
      body: { token, code: totpCode(secret, Date.now() / 1000 + 30) },
    });
    expect(right.status, 'even the right code waits for the lock to end').to.equal(429);
  });

  it('disables with a current code', async () => {
    const { me, next } = await enableMfa('mfa-off');
    const off = await server.api('PUT', '/api/user/mfa/disable', { token: me.token, body: { code: next } });
    expect(off.status).to.equal(200);
    const login = await server.login('mfa-off', PASSWORD);
    expect(login.mfa).to.equal(false);
  });

  it('recovers with a recovery code once, which then still disables MFA for 10 minutes (X-Expires-At)', async () => {
    const { recovery_codes } = await enableMfa('mfa-recover');
    const [first, second] = recovery_codes as [string, string];
    const rec = await server.api('POST', '/api/user/mfa/recover', {
      body: { identifier: 'mfa-recover@example.com', recovery_code: first.toLowerCase() },
    });
    expect(rec.status).to.equal(200);
    expect(rec.body.user).to.equal('mfa-recover');
    const expires = Number(rec.headers.get('x-expires-at'));
    const now = Date.now() / 1000;
    expect(expires).to.be.within(now + 590, now + 610);
    const reuse = await server.api('POST', '/api/user/mfa/recover', {
      body: { identifier: 'mfa-recover', recovery_code: first },
    });
    expect(reuse.status, 'a recovery code signs in once').to.equal(401);
    const stored = await server.kernel.container.cradle
      .db('mfa_recovery_codes')
      .where({ user_id: rec.body.id });
    expect(stored).to.have.length(6);
    for (const row of stored) expect(recovery_codes).to.not.include(row.code_digest);
    const off = await server.api('PUT', '/api/user/mfa/disable', {
      token: rec.body.token,
      body: { recovery_code: first },
    });
    expect(off.status).to.equal(200);
    expect(second).to.be.a('string');
  });

  it('resets MFA with the two codes mailed to the main and recovery addresses', async () => {
    await enableMfa('mfa-reset');
    const mainMail = smtp.waitFor('mfa-reset@example.com');
    const recoveryMail = smtp.waitFor('mfa-reset@backup.example');
    const ask = await server.api('POST', '/api/user/mfa/reset', { body: { identifier: 'mfa-reset' } });
    expect(ask.status).to.equal(200);
    const [m1, m2] = await Promise.all([mainMail, recoveryMail]);
    for (const m of [m1, m2]) {
      expect(m.raw).to.match(/Content-Type: text\/plain/i);
      expect(m.raw).to.match(/Content-Type: text\/html/i);
      expect(m.subject).to.include('multi-factor');
    }
    const code = (m: { text: string }) => /Code: (\d{8})/.exec(m.text)?.[1] as string;
    const userId = /mfa\/reset\/([0-9a-f]{24})/.exec(m1.text)?.[1] as string;
    expect(userId).to.match(/^[0-9a-f]{24}$/);
    const swapped = await server.api('PUT', `/api/user/mfa/reset/${userId}`, {
      body: { main_email_code: code(m2), recovery_email_code: code(m1) },
    });
    expect(swapped.status).to.equal(401);
    const done = await server.api('PUT', `/api/user/mfa/reset/${userId}`, {
      body: { main_email_code: code(m1), recovery_email_code: code(m2) },
    });
    expect(done.status).to.equal(200);
    expect(done.body.mfa).to.equal(false);
    const again = await server.api('PUT', `/api/user/mfa/reset/${userId}`, {
      body: { main_email_code: code(m1), recovery_email_code: code(m2) },
    });
    expect(again.status, 'reset codes work once').to.equal(401);
    const ttl = await server.kernel.container.cradle.cache.ttl(`mfa:reset:${userId}`);
    expect(ttl).to.equal(-2);
  });

  it('answers a reset request for an unknown account the same way, sending nothing', async () => {
    const before = smtp.messages.length;
    const res = await server.api('POST', '/api/user/mfa/reset', { body: { identifier: 'nobody-here' } });
    expect(res.status).to.equal(200);
    expect(smtp.messages.length).to.equal(before);
  });
});
