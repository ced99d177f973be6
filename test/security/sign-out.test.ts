import { expect } from 'chai';
import { createUser, PASSWORD } from '../integration/accounts/team';
import { DEVICE_PASSWORD, GatewayWorld } from '../integration/ssh/gateway-world';
import { type LoginAnswer, startServer, type TestServer } from '../support/server';
import { WebTerminalClient } from '../support/web-terminal-client';

/**
 * Signing out only forgot the token in the browser: the token stayed valid on the server for its 72 hours, for
 * anyone who had copied it. `DELETE /api/auth/user` now ends the sign-in on the server: every token of it (the one
 * signed in with, and those it was switched or refreshed into) is refused by every call that takes a user token,
 * on every instance, web terminal tickets included, and the web terminals it opened close.
 */
describe('security: signing out ends the sign-in on the server', function () {
  this.timeout(120_000);

  describe('the API', () => {
    let server: TestServer;
    let bob: LoginAnswer;
    before(async () => {
      server = await startServer({ ssh: false });
      await server.setup();
      bob = await createUser(server, 'bob');
    });
    after(async () => {
      await server?.stop();
    });

    const me = (token: string) => server.api('GET', '/api/auth/user', { token });

    it('refuses every token of the sign-in afterwards, and only those', async () => {
      const signIn = await server.login('bob', PASSWORD);
      const ns = await server.api('POST', '/api/namespaces', { token: signIn.token, body: { name: 'bobs' } });
      expect(ns.status, JSON.stringify(ns.body)).to.equal(200);
      // Switched into the new namespace, then refreshed: both belong to the same sign-in.
      const switched = (
        await server.api('GET', `/api/auth/token/${ns.body.tenant_id}`, { token: signIn.token })
      ).body.token as string;
      const refreshed = (await me(switched)).body.token as string;
      const other = await server.login('bob', PASSWORD);

      const out = await server.api('DELETE', '/api/auth/user', { token: refreshed });
      expect(out.status).to.equal(204);
      for (const token of [signIn.token, switched, refreshed]) {
        expect((await me(token)).status).to.equal(401);
        expect((await server.api('GET', '/api/namespaces', { token })).status).to.equal(401);
        expect((await server.api('GET', `/api/auth/token/${ns.body.tenant_id}`, { token })).status).to.equal(
          401,
        );
      }
      expect((await server.api('DELETE', '/api/auth/user', { token: switched })).status).to.equal(401);
      // Another sign-in of the same user, and other users, go on.
      expect((await me(other.token)).status).to.equal(200);
      expect((await me(bob.token)).status).to.equal(200);
    });

    it('refuses a web terminal ticket issued before the sign-out', async () => {
      const signIn = await server.login('bob', PASSWORD);
      const ticket = await server.api('POST', '/api/terminal/tickets', {
        token: signIn.token,
        body: { target: 'root@bobs.anything' },
      });
      expect(ticket.status, JSON.stringify(ticket.body)).to.equal(200);
      expect((await server.api('DELETE', '/api/auth/user', { token: signIn.token })).status).to.equal(204);
      const client = new WebTerminalClient(
        `${server.url.replace('http', 'ws')}/ws/ssh?ticket=${ticket.body.ticket}&cols=80&rows=24`,
      );
      await client.closed;
      expect(client.httpStatus).to.equal(401);
    });

    it('refuses a user token that names no sign-in (issued before sign-out existed)', async () => {
      const claims = JSON.parse(Buffer.from(bob.token.split('.')[1] as string, 'base64url').toString());
      const { sid: _sid, ...older } = claims;
      const token = await server.kernel.container.cradle.tokens.sign({
        kind: 'user',
        sub: older.sub,
        tenant: older.tenant,
        pwd: older.pwd,
      });
      expect((await me(token)).status).to.equal(401);
    });
  });

  (process.env.TEST_DATABASE_URL ? describe : describe.skip)('two instances sharing the store', () => {
    let first: TestServer;
    let second: TestServer;
    before(async () => {
      first = await startServer({ ssh: false });
      second = await startServer({ ssh: false, sharing: first });
      await first.setup();
    });
    after(async () => {
      await second?.stop();
      await first?.stop();
    });

    it('a sign-out on one instance is refused by the other at once', async () => {
      const signIn = await first.login('ada', 'correct-horse');
      expect((await second.api('GET', '/api/auth/user', { token: signIn.token })).status).to.equal(200);
      expect((await first.api('DELETE', '/api/auth/user', { token: signIn.token })).status).to.equal(204);
      expect((await second.api('GET', '/api/auth/user', { token: signIn.token })).status).to.equal(401);
    });
  });

  describe('an open web terminal', () => {
    let world: GatewayWorld;
    before(async () => {
      world = await GatewayWorld.start({ deviceName: 'signed-out-device' });
    });
    after(async () => {
      await world?.stop();
    });

    it('closes when its sign-in signs out', async () => {
      // A sign-in of its own: the world's owner token stays for the rest of the world.
      const signIn = await world.server.login('ada', 'correct-horse');
      const ticket = await world.server.api('POST', '/api/terminal/tickets', {
        token: signIn.token,
        body: { target: world.target() },
      });
      expect(ticket.status, JSON.stringify(ticket.body)).to.equal(200);
      const client = new WebTerminalClient(
        `${world.server.url.replace('http', 'ws')}/ws/ssh?ticket=${ticket.body.ticket}&cols=80&rows=24`,
      );
      await client.opened;
      client.control({ type: 'auth', password: DEVICE_PASSWORD });
      await client.waitFor(/[#$] $/);
      // A terminal of another sign-in stays open.
      const kept = await world.server.api('POST', '/api/terminal/tickets', {
        token: world.owner.token,
        body: { target: world.target() },
      });
      const other = new WebTerminalClient(
        `${world.server.url.replace('http', 'ws')}/ws/ssh?ticket=${kept.body.ticket}&cols=80&rows=24`,
      );
      await other.opened;
      other.control({ type: 'auth', password: DEVICE_PASSWORD });
      await other.waitFor(/[#$] $/);

      expect((await world.server.api('DELETE', '/api/auth/user', { token: signIn.token })).status).to.equal(
        204,
      );
      const closed = await client.closed;
      expect(closed.code).to.equal(4000);
      expect(client.controls).to.deep.include({ type: 'error', message: 'you signed out' });
      other.type('echo still-here\r');
      await other.waitFor(/still-here\r\n/);
      other.ws.close();
    });
  });
});
