import { expect } from 'chai';
import { type LoginAnswer, startServer, type TestServer } from '../../support/server';

/**
 * Instance administration: the setup user is the instance administrator; /api/admin/... is for
 * instance administrators only (anonymous 401, anyone else 403, namespace owners included); a disabled account
 * cannot sign in, and its tokens and the API keys it created stop working.
 */
describe('instance administration', function () {
  this.timeout(60_000);
  let server: TestServer;
  let admin: LoginAnswer;
  let carol: LoginAnswer;

  const adminCalls: [string, string, unknown?][] = [
    ['GET', '/api/admin/users'],
    ['POST', '/api/admin/users', { username: 'mallory', email: 'mallory@example.com', password: 'hunter22' }],
    ['GET', '/api/admin/users/ada'],
    ['PATCH', '/api/admin/users/ada', { disabled: true }],
    ['PUT', '/api/admin/users/ada/password', { password: 'taken-over' }],
    ['GET', '/api/admin/namespaces'],
    ['POST', '/api/admin/namespaces', { name: 'stolen', owner: 'carol' }],
    ['PATCH', '/api/admin/namespaces/ada', { max_devices: 50 }],
    ['POST', '/api/admin/namespaces/ada/members', { user: 'carol', role: 'administrator' }],
    ['GET', '/api/admin/health'],
    ['GET', '/api/admin/setup-link'],
  ];

  before(async () => {
    server = await startServer({ ssh: false });
    admin = await server.setup();
    const created = await server.api('POST', '/api/admin/users', {
      token: admin.token,
      body: { username: 'carol', email: 'carol@example.com', password: 'hunter22' },
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(200);
    carol = await server.login('carol', 'hunter22');
    // Carol owns a namespace: an owner of a namespace is still no instance administrator.
    const ns = await server.api('POST', '/api/namespaces', { token: carol.token, body: { name: 'carols' } });
    expect(ns.status).to.equal(200);
    carol = await server.login('carol', 'hunter22');
  });
  after(() => server.stop());

  it('makes the setup user the instance administrator, and says so at sign-in', () => {
    expect(admin.admin).to.equal(true);
    expect(carol.admin).to.equal(false);
  });

  it('answers 401 to anonymous callers and 403 to users who are not instance administrators', async () => {
    for (const [method, path, body] of adminCalls) {
      const anonymous = await server.api(method, path, { body });
      expect(anonymous.status, `anonymous ${method} ${path}`).to.equal(401);
      const member = await server.api(method, path, { token: carol.token, body });
      expect(member.status, `carol ${method} ${path}`).to.equal(403);
      expect(member.body.message).to.equal('this call is for instance administrators');
    }
    const key = await server.api('POST', '/api/namespaces/api-key', {
      token: admin.token,
      body: { name: 'ci-key', expires_in: -1 },
    });
    for (const [method, path, body] of adminCalls) {
      const withKey = await server.api(method, path, { apiKey: key.body.id, body });
      expect(withKey.status, `API key ${method} ${path}`).to.equal(403);
    }
    // Nothing the refused calls asked for happened.
    const users = await server.api('GET', '/api/admin/users', { token: admin.token });
    expect(users.body.map((u: { username: string }) => u.username)).to.deep.equal(['ada', 'carol']);
    expect(await server.login('ada', 'correct-horse')).to.have.property('token');
  });

  it('lists users and namespaces of every tenant, with counts, and the health of the server', async () => {
    const users = await server.api('GET', '/api/admin/users?per_page=1&page=2', { token: admin.token });
    expect(users.status).to.equal(200);
    expect(users.headers.get('x-total-count')).to.equal('2');
    expect(users.body).to.have.length(1);
    expect(users.body[0]).to.include({ username: 'carol', admin: false, disabled: false, namespaces: 1 });
    expect(users.body[0]).to.not.have.property('password_hash');
    const search = await server.api('GET', '/api/admin/users?search=CAR', { token: admin.token });
    expect(search.body.map((u: { username: string }) => u.username)).to.deep.equal(['carol']);

    const namespaces = await server.api('GET', '/api/admin/namespaces', { token: admin.token });
    expect(namespaces.status).to.equal(200);
    const carols = namespaces.body.find((n: { name: string }) => n.name === 'carols');
    expect(carols).to.include({ owner_username: 'carol', members: 1, device_count: 0 });

    const health = await server.api('GET', '/api/admin/health', { token: admin.token });
    expect(health.status).to.equal(200);
    expect(health.body.store.ok).to.equal(true);
    expect(health.body).to.include({ users: 2, namespaces: 2, edition: 'community' });
  });

  it('creates users, resets a password (signing the user out), grants and revokes administration', async () => {
    const created = await server.api('POST', '/api/admin/users', {
      token: admin.token,
      body: { username: 'dave', email: 'dave@example.com', password: 'hunter22', admin: true },
    });
    expect(created.status).to.equal(200);
    expect(created.body).to.include({ username: 'dave', name: 'dave', admin: true });
    const again = await server.api('POST', '/api/admin/users', {
      token: admin.token,
      body: { username: 'DAVE', email: 'dave@example.com', password: 'hunter22' },
    });
    expect(again.status).to.equal(409);
    expect(again.body).to.deep.equal(['username', 'email']);
    const bad = await server.api('POST', '/api/admin/users', {
      token: admin.token,
      body: { username: 'x', email: 'nope', password: '1', role: 'owner' },
    });
    expect(bad.status).to.equal(400);

    const dave = await server.login('dave', 'hunter22');
    expect((await server.api('GET', '/api/admin/health', { token: dave.token })).status).to.equal(200);
    await new Promise((r) => setTimeout(r, 1100)); // tokens carry the password-change time to the second
    const reset = await server.api('PUT', '/api/admin/users/dave/password', {
      token: admin.token,
      body: { password: 'fresh-one' },
    });
    expect(reset.status).to.equal(200);
    expect((await server.api('GET', '/api/admin/health', { token: dave.token })).status).to.equal(401);
    const daveAgain = await server.login('dave', 'fresh-one');

    const revoked = await server.api('PATCH', `/api/admin/users/${created.body.id}`, {
      token: admin.token,
      body: { admin: false },
    });
    expect(revoked.body.admin).to.equal(false);
    // Read fresh on every request: the revoked administrator's token no longer opens the area.
    expect((await server.api('GET', '/api/admin/health', { token: daveAgain.token })).status).to.equal(403);
  });

  it('never lets an administrator disable or revoke themselves, nor remove the last administrator', async () => {
    const self = await server.api('PATCH', '/api/admin/users/ada', {
      token: admin.token,
      body: { disabled: true },
    });
    expect(self.status).to.equal(403);
    const selfRevoke = await server.api('PATCH', '/api/admin/users/ada', {
      token: admin.token,
      body: { admin: false },
    });
    expect(selfRevoke.status).to.equal(403);
    expect((await server.api('GET', '/api/admin/users/ada', { token: admin.token })).body.admin).to.equal(
      true,
    );
  });

  it('a disabled account cannot sign in, and its tokens and API keys stop working at once', async () => {
    await server.api('POST', '/api/admin/users', {
      token: admin.token,
      body: { username: 'erin', email: 'erin@example.com', password: 'hunter22' },
    });
    let erin = await server.login('erin', 'hunter22');
    await server.api('POST', '/api/namespaces', { token: erin.token, body: { name: 'erins' } });
    erin = await server.login('erin', 'hunter22');
    const key = await server.api('POST', '/api/namespaces/api-key', {
      token: erin.token,
      body: { name: 'erins-key', expires_in: -1 },
    });
    expect(key.status).to.equal(200);
    expect((await server.api('GET', '/api/namespaces', { apiKey: key.body.id })).status).to.equal(200);

    const disabled = await server.api('PATCH', '/api/admin/users/erin', {
      token: admin.token,
      body: { disabled: true },
    });
    expect(disabled.body).to.include({ disabled: true });
    expect((await server.api('GET', '/api/namespaces', { token: erin.token })).status).to.equal(401);
    expect((await server.api('GET', '/api/namespaces', { apiKey: key.body.id })).status).to.equal(401);
    const login = await server.api('POST', '/api/login', {
      body: { username: 'erin', password: 'hunter22' },
    });
    expect(login.status).to.equal(403);
    expect(login.body.message).to.equal('this account is disabled');
    const wrong = await server.api('POST', '/api/login', {
      body: { username: 'erin', password: 'wrong-one' },
    });
    expect(wrong.status, 'a wrong password says nothing about the account').to.equal(401);

    await server.api('PATCH', '/api/admin/users/erin', { token: admin.token, body: { disabled: false } });
    expect((await server.login('erin', 'hunter22')).token).to.be.a('string');
    expect((await server.api('GET', '/api/namespaces', { apiKey: key.body.id })).status).to.equal(200);
  });

  it('appears in the OpenAPI document, marked for instance administrators', async () => {
    const doc = await server.api('GET', '/openapi/community.json');
    const op = doc.body.paths['/api/admin/users'].get;
    expect(op.tags).to.deep.equal(['instance']);
    expect(op['x-gatehouse-instance-admin']).to.equal(true);
    for (const p of ['/api/admin/users/{user}', '/api/admin/namespaces', '/api/admin/health']) {
      expect(doc.body.paths).to.have.property(p);
    }
  });
});
