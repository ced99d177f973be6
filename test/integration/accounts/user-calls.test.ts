import { expect } from 'chai';
import { startServer, type TestServer } from '../../support/server';
import { createUser, PASSWORD } from './team';

describe('accounts: login, profile changes, namespace switch and tokens', function () {
  // Each user costs a password hash or two (scrypt, 32 MiB): slow on two busy cores and on PGlite.
  this.timeout(90_000);
  let server: TestServer;
  before(async () => {
    server = await startServer({
      ssh: false,
      overrides: { auth: { tokenTtl: 3600, lockoutThreshold: 3, lockoutMaxMinutes: 60 } },
    });
    await server.setup();
  });
  after(async () => {
    await server?.stop();
  });

  it('validates PATCH /api/users fields by their rules, naming each bad field', async () => {
    const me = await createUser(server, 'val-user');
    const res = await server.api('PATCH', '/api/users', {
      token: me.token,
      body: { name: 'ab', username: 'a b', email: 'nope', password: '123' },
    });
    expect(res.status).to.equal(400);
    expect(res.body).to.have.members(['name', 'username', 'email', 'password']);
    const long = await server.api('PATCH', '/api/users', {
      token: me.token,
      body: { username: 'x'.repeat(31), name: 'n'.repeat(21) },
    });
    expect(long.status).to.equal(400);
    expect(long.body).to.have.members(['username', 'name']);
    const ok = await server.api('PATCH', '/api/users', {
      token: me.token,
      body: { username: 'Val.user-2_@x', name: 'Valerie' },
    });
    expect(ok.status).to.equal(200);
    expect(ok.body).to.include({ user: 'Val.user-2_@x', name: 'Valerie' });
  });

  it('answers 409 with every conflicting field name', async () => {
    const a = await createUser(server, 'clash-a');
    await createUser(server, 'clash-b');
    const both = await server.api('PATCH', '/api/users', {
      token: a.token,
      body: { username: 'CLASH-B', email: 'clash-b@example.com' },
    });
    expect(both.status).to.equal(409);
    expect(both.body).to.have.members(['username', 'email']);
    const same = await server.api('PATCH', '/api/users', {
      token: a.token,
      body: { username: 'clash-a', email: 'clash-a@example.com' },
    });
    expect(same.status, 'keeping your own values is no conflict').to.equal(200);
  });

  it('keeps the recovery e-mail apart from the e-mail, and set for good once set', async () => {
    const me = await createUser(server, 'rec-user');
    const same = await server.api('PATCH', '/api/users', {
      token: me.token,
      body: { recovery_email: 'rec-user@example.com' },
    });
    expect(same.status).to.equal(400);
    expect(same.body).to.deep.equal(['recovery_email']);
    const set = await server.api('PATCH', '/api/users', {
      token: me.token,
      body: { recovery_email: 'rec-backup@example.org' },
    });
    expect(set.status).to.equal(200);
    expect(set.body.recovery_email).to.equal('rec-backup@example.org');
    const cleared = await server.api('PATCH', '/api/users', {
      token: me.token,
      body: { recovery_email: '' },
    });
    expect(cleared.status).to.equal(400);
    expect(cleared.body).to.deep.equal(['recovery_email']);
    const swap = await server.api('PATCH', '/api/users', {
      token: me.token,
      body: { email: 'rec-backup@example.org' },
    });
    expect(swap.status).to.equal(400);
    expect(swap.body).to.deep.equal(['email']);
  });

  it('changes the password only with the current one, and older tokens stop working', async () => {
    const me = await createUser(server, 'pwd-user');
    const missing = await server.api('PATCH', '/api/users', {
      token: me.token,
      body: { password: 'new-secret' },
    });
    expect(missing.status).to.equal(400);
    expect(missing.body).to.deep.equal(['current_password']);
    const wrong = await server.api('PATCH', '/api/users', {
      token: me.token,
      body: { password: 'new-secret', current_password: 'not-it' },
    });
    expect(wrong.status).to.equal(403);
    const changed = await server.api('PATCH', '/api/users', {
      token: me.token,
      body: { password: 'new-secret', current_password: PASSWORD },
    });
    expect(changed.status).to.equal(200);
    const old = await server.api('GET', '/api/auth/user', { token: me.token });
    expect(old.status).to.equal(401);
    const fresh = await server.api('GET', '/api/auth/user', { token: changed.body.token });
    expect(fresh.status).to.equal(200);
    expect(
      (await server.api('POST', '/api/login', { body: { username: 'pwd-user', password: PASSWORD } })).status,
    ).to.equal(401);
    await server.login('pwd-user', 'new-secret');
  });

  it('keeps the deprecated profile and password calls working, for your own id only', async () => {
    const me = await createUser(server, 'old-client');
    const other = await createUser(server, 'old-other');
    const data = await server.api('PATCH', `/api/users/${me.id}/data`, {
      token: me.token,
      body: { name: 'Oldie' },
    });
    expect(data.status).to.equal(200);
    expect((await server.api('GET', '/api/auth/user', { token: me.token })).body.name).to.equal('Oldie');
    const foreign = await server.api('PATCH', `/api/users/${other.id}/data`, {
      token: me.token,
      body: { name: 'Hijack' },
    });
    expect(foreign.status).to.equal(403);
    const pwd = await server.api('PATCH', `/api/users/${me.id}/password`, {
      token: me.token,
      body: { current_password: PASSWORD, new_password: 'other-secret' },
    });
    expect(pwd.status).to.equal(200);
    await server.login('old-client', 'other-secret');
  });

  it('switches namespace with a token scoped to it, on both paths, and refuses foreign namespaces', async () => {
    const me = await createUser(server, 'switcher');
    const a = await server.api('POST', '/api/namespaces', { token: me.token, body: { name: 'switch-a' } });
    const b = await server.api('POST', '/api/namespaces', { token: me.token, body: { name: 'switch-b' } });
    expect([a.status, b.status]).to.deep.equal([200, 200]);
    const toA = await server.api('GET', `/api/auth/token/${a.body.tenant_id}`, { token: me.token });
    expect(toA.status).to.equal(200);
    expect(toA.body).to.include({ tenant: a.body.tenant_id, role: 'owner' });
    const toB = await server.api('GET', `/api/token/${b.body.tenant_id}`, { token: toA.body.token });
    expect(toB.body).to.include({ tenant: b.body.tenant_id, role: 'owner' });
    const current = await server.api('GET', '/api/auth/user', { token: toB.body.token });
    expect(current.body.tenant).to.equal(b.body.tenant_id);
    const stranger = await createUser(server, 'stranger');
    const denied = await server.api('GET', `/api/auth/token/${a.body.tenant_id}`, { token: stranger.token });
    expect(denied.status).to.equal(403);
    const relogin = await server.login('switcher', PASSWORD);
    expect(relogin.tenant, 'the last namespace switched to is where the next sign-in starts').to.equal(
      b.body.tenant_id,
    );
  });

  it('rejects tampered, expired-looking and foreign tokens with the one 401 message', async () => {
    const me = await createUser(server, 'tamper');
    const [h, p, s] = me.token.split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify({ sub: me.id, kind: 'user' })).toString('base64url')}.${s}`;
    for (const token of [forged, `${h}.${p}.${'A'.repeat(86)}`, 'garbage']) {
      const res = await server.api('GET', '/api/auth/user', { token });
      expect(res.status).to.equal(401);
      expect(res.body).to.deep.equal({ message: 'missing or malformed jwt or API token' });
    }
  });
});
