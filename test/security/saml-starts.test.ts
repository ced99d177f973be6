import { expect } from 'chai';
import { Redis } from 'ioredis';
import { postAnswer, TestIdp } from '../support/saml-idp';
import { startServer, type TestServer } from '../support/server';
import { type SourcedAnswer, sendFrom } from '../support/source';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * Starting a SAML sign-in needs no credentials, and each start keeps the id of the request it sends to the identity
 * provider for 10 minutes (so the answer can be matched to it): at 1,600 starts a second from one address, that
 * filled the server's memory. The requests waiting for an answer are bounded per source address and in total; a
 * start beyond answers 429 with Retry-After and keeps nothing.
 */
describe('security: SAML sign-in starts', function () {
  this.timeout(120_000);

  for (const store of ['in-process', 'Redis'] as const)
    describe(`waiting requests are bounded (${store} store)`, () => {
      let server: TestServer;
      let idp: TestIdp;
      /** The sign-in address of a start that was kept. */
      let firstUrl: string;
      const prefix = `${Date.now()}-saml-starts:`;
      const redis = store === 'Redis' ? new Redis(REDIS_URL, { lazyConnect: true }) : undefined;

      /** How many request ids the server keeps for answers to come. */
      const waiting = async (): Promise<number> => {
        if (redis) return (await redis.keys(`${prefix}saml:request:*`)).length;
        const { entries } = server.kernel.container.cradle.cache as unknown as {
          entries: Map<string, unknown>;
        };
        return [...entries.keys()].filter((k) => k.startsWith('saml:request:')).length;
      };
      const start = (from: string): Promise<SourcedAnswer> =>
        sendFrom(server.url, from, 'GET', '/api/user/saml/auth');

      before(async () => {
        idp = new TestIdp();
        server = await startServer({
          edition: 'enterprise',
          ssh: false,
          overrides: {
            saml: { startsPerSource: 4, startsTotal: 10 },
            redis: redis ? { url: REDIS_URL, keyPrefix: prefix } : {},
          },
        });
        const admin = await server.setup();
        const configured = await server.api('PUT', '/api/admin/saml', {
          token: admin.token,
          body: { enabled: true, idp_metadata_xml: idp.metadata() },
        });
        expect(configured.status, JSON.stringify(configured.body)).to.equal(200);
      });
      after(async () => {
        await server?.stop();
        if (redis) {
          const left = await redis.keys(`${prefix}*`);
          if (left.length) await redis.del(...left);
          redis.disconnect();
        }
      });

      it('lets one address keep at most its budget waiting, however fast it asks', async () => {
        const answers = await Promise.all(Array.from({ length: 40 }, () => start('127.0.0.2')));
        const started = answers.filter((a) => a.status === 200);
        const refused = answers.filter((a) => a.status === 429);
        expect(started.length, 'started: the budget of the address').to.equal(4);
        firstUrl = JSON.parse((started[0] as SourcedAnswer).body).url;
        expect(refused.length).to.equal(36);
        for (const r of refused) {
          expect(Number(r.retryAfter)).to.be.within(1, 600);
          expect(JSON.parse(r.body).message).to.match(/your address/);
        }
        expect(await waiting(), 'a refused start keeps nothing').to.equal(4);
        expect((await start('127.0.0.3')).status, 'another address is not held up').to.equal(200);
      });

      it('keeps at most the installation budget waiting, whatever the number of addresses', async () => {
        // 4 from .2 and 1 from .3 wait already; addresses .4 to .9 ask 4 times each.
        const answers = await Promise.all(
          ['127.0.0.4', '127.0.0.5', '127.0.0.6', '127.0.0.7', '127.0.0.8', '127.0.0.9'].flatMap((from) =>
            Array.from({ length: 4 }, () => start(from)),
          ),
        );
        expect(answers.filter((a) => a.status === 200).length).to.equal(5);
        const refused = answers.filter((a) => a.status === 429);
        expect(refused.length).to.equal(19);
        expect(
          refused.some((r) => /waiting for the identity provider/.test(JSON.parse(r.body).message)),
        ).to.equal(true);
        expect(await waiting()).to.equal(10);
        expect((await start('127.0.0.10')).status).to.equal(429);
        expect(await waiting()).to.equal(10);
      });

      it('still signs in the person whose start was kept', async () => {
        // The bound refuses new starts, never a sign-in under way: a kept request is answered as before.
        const metadata = await (await fetch(`${server.url}/api/user/saml/metadata`)).text();
        const answer = await idp.answer(firstUrl, metadata, {
          email: 'kept@example.com',
          name: 'Kept Start',
        });
        expect(await postAnswer(server.url, answer)).to.match(/^\/#sso=[A-Za-z0-9_-]+$/);
      });
    });
});
