import { createServer } from 'node:net';
import { expect } from 'chai';
import { totpCode } from '../../plugins/community/mfa/totp';
import { createUser } from '../integration/accounts/team';
import { startServer, type TestServer } from '../support/server';

/** A port nothing listens on: a mail server that is down. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** What a client sees of an answer, without what differs on every answer anyway. */
function seen(res: { status: number; body: unknown; headers: Headers }) {
  const headers = [...res.headers.keys()].filter((h) => !['date', 'x-request-id'].includes(h)).sort();
  return { status: res.status, body: res.body, headers };
}

async function withMfa(server: TestServer, username: string) {
  const me = await createUser(server, username);
  await server.api('PATCH', '/api/users', {
    token: me.token,
    body: { recovery_email: `${username}@backup.example` },
  });
  const gen = await server.api('GET', '/api/user/mfa/generate', { token: me.token });
  const enabled = await server.api('PUT', '/api/user/mfa/enable', {
    token: me.token,
    body: {
      code: totpCode(gen.body.secret, Date.now() / 1000),
      secret: gen.body.secret,
      recovery_codes: gen.body.recovery_codes,
    },
  });
  expect(enabled.status).to.equal(200);
}

/**
 * A security review (lesser leaks): "MFA reset answers differ for accounts with and without MFA". The reset request answered
 * only after mailing codes, and only for accounts with MFA, so a mail server that was down (or absent) or merely
 * slow told which accounts have MFA. Every account now gets the same answer.
 */
for (const mail of ['a mail server that is down', 'no mail server configured'] as const) {
  describe(`security: MFA reset answers the same for every account (${mail})`, function () {
    this.timeout(120_000);
    let server: TestServer;
    before(async () => {
      const smtp =
        mail === 'a mail server that is down' ? { url: `smtp://127.0.0.1:${await closedPort()}` } : {};
      server = await startServer({
        ssh: false,
        overrides: { smtp: { from: 'Gatehouse <gh@test>', ...smtp } },
      });
      await server.setup();
      await withMfa(server, 'has-mfa');
      await createUser(server, 'no-mfa');
    });
    after(async () => {
      await server?.stop();
    });

    it('for an account with MFA, one without, and no account at all', async () => {
      const ask = (identifier: string) => server.api('POST', '/api/user/mfa/reset', { body: { identifier } });
      const answers = [
        seen(await ask('has-mfa')),
        seen(await ask('no-mfa')),
        seen(await ask('nobody-at-all')),
      ];
      expect(answers[1]).to.deep.equal(answers[0]);
      expect(answers[2]).to.deep.equal(answers[0]);
      expect(answers[0]?.status).to.equal(mail === 'a mail server that is down' ? 200 : 503);
    });
  });
}
