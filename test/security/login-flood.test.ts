import { expect } from 'chai';
import { createUser, PASSWORD } from '../integration/accounts/team';
import { startServer, type TestServer } from '../support/server';
import { postFrom, type SourcedAnswer } from '../support/source';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** POST /api/login from another loopback address: another source. */
function loginFrom(
  server: TestServer,
  from: string,
  username: string,
  password: string,
): Promise<SourcedAnswer> {
  return postFrom(server.url, from, '/api/login', { username, password });
}

/**
 * A security review: "no cap on login hashing: 50 bogus logins took a real login from 0.2 s to 4.4 s". Failed logins are
 * limited per source address, and password hashing is bounded with a fair queue; both answer 429 with Retry-After.
 * (How fast a real login stays under a flood is measured in bench/login/flood.ts, not asserted here.)
 */
describe('security: login floods', function () {
  this.timeout(120_000);

  for (const store of ['in-process', 'Redis'] as const)
    describe(`failed logins per source address (${store} counters)`, () => {
      let server: TestServer;
      before(async () => {
        server = await startServer({
          ssh: false,
          overrides: {
            auth: { tokenTtl: 3600, lockoutThreshold: 3, loginFailuresPerSource: 5, loginWindowSeconds: 120 },
            redis: store === 'Redis' ? { url: REDIS_URL, keyPrefix: `${Date.now()}-flood:` } : {},
          },
        });
        await server.setup();
        await createUser(server, 'flood-victim');
      });
      after(async () => {
        await server?.stop();
      });

      it('answers 429 with Retry-After once an address spends its budget, even spread over many names', async () => {
        const answers = await Promise.all(
          Array.from({ length: 20 }, (_, i) => loginFrom(server, '127.0.0.2', `sprayed-${i}`, 'guess')),
        );
        expect(answers.filter((a) => a.status === 401).length, 'checked: at most the budget').to.be.at.most(
          5,
        );
        const refused = answers.filter((a) => a.status === 429);
        expect(refused.length).to.be.at.least(15);
        for (const r of refused) {
          expect(Number(r.retryAfter)).to.be.within(1, 120);
          expect(JSON.parse(r.body)).to.have.property('message').that.is.a('string');
        }
        const sameSource = await loginFrom(server, '127.0.0.2', 'flood-victim', PASSWORD);
        expect(sameSource.status, 'the spent address waits for its window').to.equal(429);
        const otherSource = await loginFrom(server, '127.0.0.3', 'flood-victim', PASSWORD);
        expect(otherSource.status, 'another address is not held up').to.equal(200);
      });

      it('does not count successful logins', async () => {
        for (let i = 0; i < 8; i++) {
          expect((await loginFrom(server, '127.0.0.4', 'flood-victim', PASSWORD)).status).to.equal(200);
        }
        expect((await loginFrom(server, '127.0.0.4', 'nobody-here', 'x')).status).to.equal(401);
      });
    });

  describe('bounded password hashing', () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({
        ssh: false,
        overrides: {
          // One hash at a time and two waiting; the per-source budget off, so only the hashing cap acts.
          auth: { tokenTtl: 3600, hashConcurrency: 1, hashQueue: 2, loginFailuresPerSource: 0 },
        },
      });
      await server.setup();
      await createUser(server, 'real-user');
    });
    after(async () => {
      await server?.stop();
    });

    it('refuses hashes beyond the queue with 429 and serves another source fairly', async () => {
      const flood = Array.from({ length: 12 }, (_, i) =>
        loginFrom(server, '127.0.0.5', `bogus-${i}`, 'guess'),
      );
      const real = loginFrom(server, '127.0.0.6', 'real-user', PASSWORD);
      const answers = await Promise.all(flood);
      expect((await real).status, 'the real user, from another address, signs in').to.equal(200);
      const hashed = answers.filter((a) => a.status === 401).length;
      expect(hashed, 'one running and two waiting at most at any time').to.be.below(12);
      const busy = answers.filter((a) => a.status === 429);
      expect(busy.length).to.equal(12 - hashed);
      for (const b of busy) {
        expect(b.retryAfter).to.equal('1');
        expect(JSON.parse(b.body).message).to.match(/try again/);
      }
      expect(server.kernel.container.cradle.passwords.load).to.deep.equal({ running: 0, waiting: 0 });
    });

    it('lets an account in from an address it signed in from before while many addresses flood', async () => {
      expect((await loginFrom(server, '127.0.0.7', 'real-user', PASSWORD)).status).to.equal(200);
      const passwords = server.kernel.container.cradle.passwords;
      let flooding = true;
      let n = 0;
      const flood = Array.from({ length: 8 }, async (_, i) => {
        while (flooding) await loginFrom(server, `127.0.2.${i + 1}`, `bogus-${n++}`, 'guess');
      });
      try {
        // The flood holds the one slot and fills the queue.
        while (passwords.load.waiting < 2) await new Promise((r) => setTimeout(r, 20));
        const knownPlace = await loginFrom(server, '127.0.0.7', 'real-user', PASSWORD);
        expect(knownPlace.status, 'from where it signed in before: ahead of the flood').to.equal(200);
      } finally {
        flooding = false;
        await Promise.all(flood);
      }
    });
  });
});
