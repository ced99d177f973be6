import { expect } from 'chai';
import { defaultUser, startServer, type TestServer } from '../../support/server';

describe('first calls: info, setup, login, current user', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server?.stop();
  });

  it('GET /info tells the version, endpoints and that setup is still to do', async () => {
    const res = await server.api('GET', '/info?agent_version=0.1.0');
    expect(res.status).to.equal(200);
    expect(res.body.version).to.match(/^\d+\.\d+\.\d+/);
    expect(res.body.endpoints).to.deep.equal({
      ssh: `127.0.0.1:${server.sshPort}`,
      api: `127.0.0.1:${server.kernel.httpPort}`,
    });
    expect(res.body.setup).to.equal(false);
    expect(res.body.authentication).to.deep.equal({ local: true, saml: false });
  });

  it('refuses setup without a signature or with a wrong one', async () => {
    const missing = await server.api('POST', '/api/setup', { body: defaultUser });
    expect(missing.status).to.equal(400);
    expect(missing.body).to.deep.equal(['sign']);
    const wrong = await server.api('POST', `/api/setup?sign=${'A'.repeat(86)}`, { body: defaultUser });
    expect(wrong.status).to.equal(403);
  });

  it('validates setup fields and names the invalid ones', async () => {
    const res = await server.api('POST', '/api/setup?sign=x', {
      body: { name: 'A', email: 'not-an-email', username: 'a b', password: '1' },
    });
    expect(res.status).to.equal(400);
    expect(res.body).to.have.members(['name', 'email', 'username', 'password']);
  });

  it('concurrent setups create one user, and setup cannot run twice', async () => {
    const { setupSignature } = await import('../../../plugins/community/setup/signature');
    const sign = setupSignature(server.kernel.container.cradle.keys);
    const answers = await Promise.all(
      [0, 1, 2, 3].map((i) =>
        server.api('POST', `/api/setup?sign=${sign}`, {
          body: { ...defaultUser, username: `ada${i}`, email: `ada${i}@example.com` },
        }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).to.deep.equal([200, 403, 403, 403]);
    const [row] = await server.kernel.container.cradle.db('users').count({ count: '*' });
    const count = (row as { count: number }).count;
    expect(Number(count)).to.equal(1);
    const info = await server.api('GET', '/info');
    expect(info.body.setup).to.equal(true);
  });

  it('logs in by username or e-mail and returns the authentication result', async () => {
    const winner = (await server.kernel.container.cradle.db('users').first('username', 'email')) as {
      username: string;
      email: string;
    };
    const byName = await server.login(winner.username, defaultUser.password);
    expect(byName).to.include({ origin: 'local', user: winner.username, role: 'owner', mfa: false });
    expect(byName.id).to.match(/^[0-9a-f]{24}$/);
    expect(byName.tenant).to.match(/^[0-9a-f-]{36}$/);
    expect(byName).to.have.keys([
      'token',
      'id',
      'origin',
      'user',
      'name',
      'email',
      'recovery_email',
      'tenant',
      'role',
      'mfa',
      'max_namespaces',
      'admin',
    ]);
    // The setup user is the instance administrator; the flag is Gatehouse's one addition to the authentication result.
    expect(byName.admin).to.equal(true);
    const byEmail = await server.login(winner.email.toUpperCase(), defaultUser.password);
    expect(byEmail.id).to.equal(byName.id);

    const me = await server.api('GET', '/api/auth/user', { token: byName.token });
    expect(me.status).to.equal(200);
    expect(me.body.user).to.equal(winner.username);
    expect(me.body.tenant).to.equal(byName.tenant);
  });

  it('answers a wrong password and an unknown user alike with 401', async () => {
    const wrong = await server.api('POST', '/api/login', {
      body: { username: 'ada0', password: 'nope-nope' },
    });
    const unknown = await server.api('POST', '/api/login', {
      body: { username: 'nobody', password: 'nope-nope' },
    });
    expect(wrong.status).to.equal(401);
    expect(unknown.status).to.equal(401);
    expect(wrong.body).to.deep.equal(unknown.body);
  });

  it('refuses missing, malformed and forged tokens with the one 401 message', async () => {
    for (const headers of <Record<string, string>[]>[
      {},
      { authorization: 'Bearer' },
      { authorization: 'Basic abc' },
      { authorization: 'Bearer a.b.c' },
    ]) {
      const res = await server.api('GET', '/api/auth/user', { headers });
      expect(res.status, JSON.stringify(headers)).to.equal(401);
      expect(res.body).to.deep.equal({ message: 'missing or malformed jwt or API token' });
    }
  });

  it('answers the SAML sign-in with 501 outside the enterprise edition, saying why', async () => {
    const res = await server.api('GET', '/api/user/saml/auth');
    expect(res.status).to.equal(501);
    expect(res.body.message).to.equal('SAML needs the enterprise edition');
  });
});
