import { expect } from 'chai';
import { accountRoutes } from '../../../plugins/cloud/accounts/routes';
import { announcementRoutes } from '../../../plugins/cloud/announcements/routes';
import { invitationRoutes } from '../../../plugins/cloud/invitations/routes';
import { startServer, type TestServer } from '../../support/server';

const cloudRoutes = [...accountRoutes, ...invitationRoutes, ...announcementRoutes];
const samples: Record<string, string> = {
  tenant: '00000000-0000-4000-8000-000000000000',
  id: 'a'.repeat(24),
  uid: 'a'.repeat(24),
  uuid: '00000000-0000-4000-8000-000000000001',
};
const concrete = (path: string) => path.replace(/:(\w+)/g, (_, name: string) => samples[name] ?? name);

for (const edition of ['community', 'enterprise']) {
  describe(`cloud calls in the ${edition} edition`, function () {
    this.timeout(60_000);
    let server: TestServer;
    let token: string;
    before(async () => {
      server = await startServer({ edition, ssh: false });
      token = (await server.setup()).token;
    });
    after(async () => {
      await server?.stop();
    });

    it('registers none of them: each answers 404, signed in or not', async () => {
      const registered = new Set(server.kernel.routes.map((r) => `${r.method} ${r.path}`));
      for (const route of cloudRoutes) {
        expect(registered.has(`${route.method} ${route.path}`), `${route.method} ${route.path}`).to.equal(
          false,
        );
        const path = concrete(route.path);
        // community's `PATCH .../members/:uid` takes this path as a member id and refuses it as one.
        if (path.endsWith('/members/accept-invite')) {
          const res = await server.api(route.method, path, { token, body: { sig: 'x' } });
          expect(res.status).to.equal(400);
          expect(res.body).to.include('uid');
          continue;
        }
        for (const opts of [{}, { token }]) {
          const res = await server.api(route.method, path, {
            ...opts,
            body: route.method === 'GET' ? undefined : {},
          });
          expect(res.status, `${route.method} ${path}`).to.equal(404);
        }
      }
    });
  });
}

describe('cloud calls that send mail, on a server without outgoing mail', function () {
  this.timeout(60_000);
  let server: TestServer;
  before(async () => {
    server = await startServer({ edition: 'cloud', ssh: false });
  });
  after(async () => {
    await server?.stop();
  });

  it('answer 503 for everyone, and create nothing', async () => {
    const owner = await server.setup();
    const calls: [string, string, unknown][] = [
      [
        'POST',
        '/api/register',
        { name: 'No Mail', email: 'nomail@example.com', username: 'nomail', password: 'no-mail' },
      ],
      ['POST', '/api/user/resend_email', { username: 'ada' }],
      ['POST', '/api/user/recover_password', { username: 'nobody' }],
    ];
    for (const [method, path, body] of calls) {
      const res = await server.api(method, path, { body });
      expect(res.status, path).to.equal(503);
      expect(res.body.message).to.match(/GATEHOUSE_SMTP_URL/);
    }
    const invite = await server.api('POST', `/api/namespaces/${owner.tenant}/members/invites`, {
      token: owner.token,
      body: { email: 'someone@example.com', role: 'observer' },
    });
    expect(invite.status).to.equal(503);
    const db = server.kernel.container.cradle.db;
    expect(await db('users').where({ username: 'nomail' }).first()).to.equal(undefined);
    expect(await db('member_invites')).to.have.length(0);
  });
});
