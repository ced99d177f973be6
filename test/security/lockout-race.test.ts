import { expect } from 'chai';
import { createUser, PASSWORD } from '../integration/accounts/team';
import { startServer, type TestServer } from '../support/server';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const THRESHOLD = 3;

/**
 * A security review found that fifty wrong passwords sent at once were all hashed, and a right one at the 40th attempt signed in past a
 * threshold of 3. The lockout now counts a guess before checking it, in one atomic step, on both of its stores.
 */
for (const store of ['in-process', 'Redis'] as const) {
  describe(`security: parallel guesses against the lockout (${store} counters)`, function () {
    this.timeout(120_000);
    let server: TestServer;
    before(async () => {
      server = await startServer({
        ssh: false,
        overrides: {
          // The per-source budget off: this is about the per-pair lockout alone.
          auth: {
            tokenTtl: 3600,
            lockoutThreshold: THRESHOLD,
            lockoutMaxMinutes: 60,
            loginFailuresPerSource: 0,
          },
          // Without a URL the counters live in the server's own memory.
          redis: store === 'Redis' ? { url: REDIS_URL, keyPrefix: `${Date.now()}-race:` } : {},
        },
      });
      await server.setup();
    });
    after(async () => {
      await server?.stop();
    });

    it('50 concurrent logins, the right password 40th: none signs in and only the threshold is checked', async () => {
      const user = await createUser(server, `race-${store === 'Redis' ? 'r' : 'm'}`);
      const started = Math.floor(Date.now() / 1000);
      const attempts = Array.from({ length: 50 }, (_, i) =>
        server.api('POST', '/api/login', {
          body: { username: user.user, password: i === 39 ? PASSWORD : `wrong-${i}` },
        }),
      );
      const answers = await Promise.all(attempts);
      const statuses = answers.map((a) => a.status);
      expect(statuses[39], 'the right password at attempt 40').to.equal(429);
      expect(statuses.filter((s) => s === 200)).to.have.length(0);
      expect(statuses.filter((s) => s === 401).length, 'wrong guesses answered as such').to.be.at.most(
        THRESHOLD - 1,
      );
      expect(statuses.every((s) => s === 401 || s === 429)).to.equal(true);
      for (const a of answers.filter((x) => x.status === 429)) {
        expect(Number(a.headers.get('x-account-lockout')), 'a unix time, not 0').to.be.above(started);
        expect(Number(a.headers.get('retry-after'))).to.be.at.least(1);
      }
      // Only the guesses let through were checked and counted: exactly the threshold, not fifty.
      const cache = server.kernel.container.cradle.cache;
      expect(await cache.get(`lockout:login:127.0.0.1:${user.id}:n`)).to.equal(String(THRESHOLD));
      expect(await cache.get(`lockout:login:127.0.0.1:${user.id}:flying`), 'nothing left in flight').to.equal(
        null,
      );
      const after = await server.api('POST', '/api/login', {
        body: { username: user.user, password: PASSWORD },
      });
      expect(after.status, 'the pair is locked').to.equal(429);
    });

    it('20 concurrent MFA codes: only the threshold is checked', async () => {
      const { totpCode } = await import('../../plugins/community/mfa/totp');
      const me = await createUser(server, `race-mfa-${store === 'Redis' ? 'r' : 'm'}`);
      await server.api('PATCH', '/api/users', {
        token: me.token,
        body: { recovery_email: 'race@backup.example' },
      });
      const gen = await server.api('GET', '/api/user/mfa/generate', { token: me.token });
      const { secret, recovery_codes } = gen.body as { secret: string; recovery_codes: string[] };
      const enabled = await server.api('PUT', '/api/user/mfa/enable', {
        token: me.token,
        body: { code: totpCode(secret, Date.now() / 1000), secret, recovery_codes },
      });
      expect(enabled.status).to.equal(200);
      const login = await server.api('POST', '/api/login', {
        body: { username: me.user, password: PASSWORD },
      });
      const mfaToken = login.headers.get('x-mfa-token') as string;
      const right = totpCode(secret, Date.now() / 1000 + 30);
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          server.api('POST', '/api/user/mfa/auth', {
            body: { token: mfaToken, code: i === 15 ? right : String(100000 + i) },
          }),
        ),
      );
      expect(answers.filter((a) => a.status === 200)).to.have.length(0);
      const cache = server.kernel.container.cradle.cache;
      expect(await cache.get(`lockout:mfa:127.0.0.1:${me.id}:n`)).to.equal(String(THRESHOLD));
    });
  });
}
