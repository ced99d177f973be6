import { expect } from 'chai';
import { startServer, type TestServer } from '../../support/server';
import { createTeam, createUser, PASSWORD, switchTo } from './team';

describe('accounts: namespaces and members', function () {
  // Each user costs a password hash or two (scrypt, 32 MiB): slow on two busy cores and on PGlite.
  this.timeout(90_000);
  let server: TestServer;
  before(async () => {
    server = await startServer({ ssh: false });
    await server.setup();
  });
  after(async () => {
    await server?.stop();
  });

  it('creates, lists, gets, renames and configures a namespace', async () => {
    const me = await createUser(server, 'ns-owner');
    const bad = await server.api('POST', '/api/namespaces', { token: me.token, body: { name: 'Has Space' } });
    expect(bad.status).to.equal(400);
    expect(bad.body).to.deep.equal(['name']);
    const created = await server.api('POST', '/api/namespaces', {
      token: me.token,
      body: { name: 'ns-one' },
    });
    expect(created.status).to.equal(200);
    expect(created.body).to.include({ name: 'ns-one', owner: me.id, device_count: 0, max_devices: -1 });
    // Outside the cloud edition a namespace has no billing.
    expect(created.body.billing).to.equal(null);
    expect(created.body.tenant_id).to.match(/^[0-9a-f-]{36}$/);
    expect(created.body.members).to.have.length(1);
    expect(created.body.members[0]).to.include({
      id: me.id,
      role: 'owner',
      status: 'accepted',
      type: 'personal',
    });
    const clash = await server.api('POST', '/api/namespaces', {
      token: me.token,
      body: { name: 'NS-ONE'.toLowerCase() },
    });
    expect(clash.status).to.equal(409);
    expect(clash.body).to.deep.equal(['name']);
    await server.api('POST', '/api/namespaces', { token: me.token, body: { name: 'ns-two' } });
    const list = await server.api('GET', '/api/namespaces?per_page=1', { token: me.token });
    expect(list.status).to.equal(200);
    expect(list.headers.get('x-total-count')).to.equal('2');
    expect(list.body).to.have.length(1);
    const token = await switchTo(server, me.token, created.body.tenant_id);
    const tenant = created.body.tenant_id;
    const long = await server.api('PUT', `/api/namespaces/${tenant}`, {
      token,
      body: { settings: { connection_announcement: 'x'.repeat(4097) } },
    });
    expect(long.status).to.equal(400);
    const put = await server.api('PUT', `/api/namespaces/${tenant}`, {
      token,
      body: {
        name: 'ns-renamed',
        settings: { session_record: false, connection_announcement: 'Hello\n'.repeat(700).slice(0, 4096) },
      },
    });
    expect(put.status).to.equal(200);
    expect(put.body.name).to.equal('ns-renamed');
    expect(put.body.settings.session_record).to.equal(false);
    expect(put.body.settings.connection_announcement).to.have.length(4096);
    // Recording retention: 0 (keep) until set, whole days up to 3650, other settings kept.
    expect(put.body.settings.recording_retention_days).to.equal(0);
    for (const bad of [-1, 3651, 1.5, '30'])
      expect(
        (
          await server.api('PUT', `/api/namespaces/${tenant}`, {
            token,
            body: { settings: { recording_retention_days: bad } },
          })
        ).status,
        String(bad),
      ).to.equal(400);
    const kept = await server.api('PUT', `/api/namespaces/${tenant}`, {
      token,
      body: { settings: { recording_retention_days: 90 } },
    });
    expect(kept.status).to.equal(200);
    expect(kept.body.settings).to.include({ recording_retention_days: 90, session_record: false });
    const get = await server.api('GET', `/api/namespaces/${tenant}`, { token });
    expect(get.body.name).to.equal('ns-renamed');
    expect(get.body.settings.recording_retention_days).to.equal(90);
    const s1 = await server.api('GET', `/api/namespaces/${tenant}/support`, { token });
    const s2 = await server.api('GET', `/api/namespaces/${tenant}/support`, { token });
    expect(s1.body.identifier).to.match(/^[0-9a-f]{64}$/);
    expect(s2.body.identifier).to.equal(s1.body.identifier);
  });

  it("keeps to the owner's max_namespaces: 0 none, a positive cap, -1 unlimited", async () => {
    const db = server.kernel.container.cradle.db;
    const none = await createUser(server, 'cap-none');
    await db('users').where({ id: none.id }).update({ max_namespaces: 0 });
    expect(
      (await server.api('POST', '/api/namespaces', { token: none.token, body: { name: 'cap-none-ns' } }))
        .status,
    ).to.equal(403);
    const one = await createUser(server, 'cap-one');
    await db('users').where({ id: one.id }).update({ max_namespaces: 1 });
    expect(
      (await server.api('POST', '/api/namespaces', { token: one.token, body: { name: 'cap-one-a' } })).status,
    ).to.equal(200);
    expect(
      (await server.api('POST', '/api/namespaces', { token: one.token, body: { name: 'cap-one-b' } })).status,
    ).to.equal(403);
  });

  it('adds members at once, changes roles and removes them, never above your own role or touching the owner', async () => {
    const team = await createTeam(server, 'crew');
    const t = team.tenant;
    const ns = await server.api('GET', `/api/namespaces/${t}`, { token: team.tokens.observer });
    expect(ns.body.members.map((m: { role: string }) => m.role)).to.have.members([
      'owner',
      'administrator',
      'operator',
      'observer',
    ]);
    expect(ns.body.members.every((m: { status: string }) => m.status === 'accepted')).to.equal(true);

    const newbie = await createUser(server, 'crew-newbie');
    const asOwner = await server.api('POST', `/api/namespaces/${t}/members`, {
      token: team.tokens.administrator,
      body: { email: 'crew-newbie@example.com', role: 'owner' },
    });
    expect(asOwner.status, 'the owner role is never granted').to.equal(400);
    const added = await server.api('POST', `/api/namespaces/${t}/members`, {
      token: team.tokens.administrator,
      body: { email: 'CREW-NEWBIE@example.com', role: 'administrator' },
    });
    expect(added.status).to.equal(200);
    expect(added.body.tenant_id).to.equal(t);
    const twice = await server.api('POST', `/api/namespaces/${t}/members`, {
      token: team.tokens.owner,
      body: { email: 'crew-newbie@example.com', role: 'observer' },
    });
    expect(twice.status).to.equal(409);
    expect(twice.body).to.deep.equal(['email']);
    const nobody = await server.api('POST', `/api/namespaces/${t}/members`, {
      token: team.tokens.owner,
      body: { email: 'nobody@example.com', role: 'observer' },
    });
    expect(nobody.status).to.equal(404);
    // Community adds existing accounts only: the answer says the person needs one and how it is made.
    expect(nobody.body.code).to.equal('account_needed');
    expect(nobody.body.message).to.match(/needs an account first/);
    expect(nobody.body.message).to.contain('gatehouse user create --username <username> --email <email>');

    const touchOwner = await server.api('PATCH', `/api/namespaces/${t}/members/${team.ids.owner}`, {
      token: team.tokens.administrator,
      body: { role: 'observer' },
    });
    expect(touchOwner.status).to.equal(403);
    const removeOwner = await server.api('DELETE', `/api/namespaces/${t}/members/${team.ids.owner}`, {
      token: team.tokens.administrator,
    });
    expect(removeOwner.status).to.equal(403);
    const demote = await server.api('PATCH', `/api/namespaces/${t}/members/${newbie.id}`, {
      token: team.tokens.administrator,
      body: { role: 'observer' },
    });
    expect(demote.status).to.equal(200);
    const newbieToken = await switchTo(server, newbie.token, t);
    const me = await server.api('GET', '/api/auth/user', { token: newbieToken });
    expect(me.body.role, 'the role is read fresh').to.equal('observer');

    const removed = await server.api('DELETE', `/api/namespaces/${t}/members/${newbie.id}`, {
      token: team.tokens.administrator,
    });
    expect(removed.status).to.equal(200);
    expect(removed.body.members.map((m: { id: string }) => m.id)).to.not.include(newbie.id);
    const after = await server.api('GET', `/api/namespaces/${t}`, { token: newbieToken });
    expect(after.status, 'a removed member loses access at once').to.equal(403);
  });

  it('lets members leave with a new auth that excludes the namespace; the owner cannot leave', async () => {
    const team = await createTeam(server, 'leavers');
    const left = await server.api('DELETE', `/api/namespaces/${team.tenant}/members`, {
      token: team.tokens.operator,
    });
    expect(left.status).to.equal(200);
    expect(left.body.tenant).to.not.equal(team.tenant);
    expect(left.body.token).to.be.a('string');
    const back = await server.api('GET', `/api/auth/token/${team.tenant}`, { token: left.body.token });
    expect(back.status).to.equal(403);
    const owner = await server.api('DELETE', `/api/namespaces/${team.tenant}/members`, {
      token: team.tokens.owner,
    });
    expect(owner.status).to.equal(403);
  });

  it('lets an edition keep invites pending through the member.invite hook; a pending member has no access', async () => {
    const team = await createTeam(server, 'hooked');
    const invitee = await createUser(server, 'hooked-invitee');
    let seen: { email: string; role: string; namespace: string } | undefined;
    let active = true;
    server.kernel.hooks.on('member.invite', (invite) => {
      if (!active) return;
      seen = { email: invite.email, role: invite.role, namespace: invite.namespace };
      invite.status = 'pending';
    });
    try {
      const res = await server.api('POST', `/api/namespaces/${team.tenant}/members`, {
        token: team.tokens.owner,
        body: { email: 'hooked-invitee@example.com', role: 'operator' },
      });
      expect(res.status).to.equal(200);
      expect(seen).to.deep.equal({
        email: 'hooked-invitee@example.com',
        role: 'operator',
        namespace: 'hooked-ns',
      });
      const member = res.body.members.find((m: { id: string }) => m.id === invitee.id);
      expect(member.status).to.equal('pending');
      const sw = await server.api('GET', `/api/auth/token/${team.tenant}`, { token: invitee.token });
      expect(sw.status).to.equal(403);
    } finally {
      active = false;
    }
  });

  it('deletes a namespace with everything in it, owner only', async () => {
    const team = await createTeam(server, 'doomed');
    const key = await server.api('POST', '/api/namespaces/api-key', {
      token: team.tokens.owner,
      body: { name: 'doomed-key', expires_in: -1 },
    });
    expect(key.status).to.equal(200);
    expect(
      (await server.api('DELETE', `/api/namespaces/${team.tenant}`, { token: team.tokens.administrator }))
        .status,
    ).to.equal(403);
    const del = await server.api('DELETE', `/api/namespaces/${team.tenant}`, { token: team.tokens.owner });
    expect(del.status).to.equal(200);
    const db = server.kernel.container.cradle.db;
    expect(await db('namespaces').where({ tenant_id: team.tenant })).to.have.length(0);
    expect(await db('namespace_members').where({ tenant_id: team.tenant })).to.have.length(0);
    expect(await db('api_keys').where({ tenant_id: team.tenant })).to.have.length(0);
    const withKey = await server.api('GET', '/api/namespaces', { apiKey: key.body.id });
    expect(withKey.status).to.equal(401);
    await server.login('doomed-owner', PASSWORD);
  });
});
