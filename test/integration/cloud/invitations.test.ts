import { expect } from 'chai';
import { type LoginAnswer, startServer, type TestServer } from '../../support/server';
import { startSmtp, type TestSmtp } from '../../support/smtp';
import { linkIn, mailCount, signUp } from './mail';

describe('cloud: e-mailed invitations keep members pending until they accept', function () {
  this.timeout(120_000);
  let server: TestServer;
  let smtp: TestSmtp;
  let owner: LoginAnswer;
  let tenant: string;
  before(async () => {
    smtp = await startSmtp();
    server = await startServer({
      edition: 'cloud',
      ssh: false,
      overrides: { smtp: { url: smtp.url, from: 'Gatehouse <gh@test>' }, publicUrl: 'https://cloud.test/' },
    });
    owner = await server.setup();
    tenant = owner.tenant;
  });
  after(async () => {
    await server?.stop();
    await smtp?.stop();
  });

  const invite = (email: string, role = 'operator', token = owner.token) =>
    server.api('POST', `/api/namespaces/${tenant}/members/invites`, { token, body: { email, role } });
  const status = (id: string, sig: string, t = tenant) =>
    server.api('GET', `/api/namespaces/${t}/members/${id}/accept-invite?sig=${encodeURIComponent(sig)}`);
  const accept = (token: string, sig: string) =>
    server.api('PATCH', `/api/namespaces/${tenant}/members/accept-invite`, { token, body: { sig } });
  const memberOf = async (id: string) => {
    const ns = await server.api('GET', `/api/namespaces/${tenant}`, { token: owner.token });
    return (ns.body.members as { id: string; status: string; role: string; expires_at?: string }[]).find(
      (m) => m.id === id,
    );
  };

  it('invites an account: pending without access, the link mailed and answered, accepted once by the invitee', async () => {
    const bob = await signUp(server, smtp, 'bob');
    const carol = await signUp(server, smtp, 'carol');
    const mail = smtp.waitFor('bob@example.com');
    const res = await invite('Bob@Example.com');
    expect(res.status).to.equal(200);
    const link = new URL(res.body.link);
    expect(link.origin + link.pathname).to.equal('https://cloud.test/accept-invite');
    expect(link.searchParams.get('tenant-id')).to.equal(tenant);
    expect(link.searchParams.get('user-id')).to.equal(bob.id);
    const sig = link.searchParams.get('sig') as string;
    const received = await mail;
    expect(received.subject).to.equal('Gatehouse: ada invited you to the namespace ada');
    expect(linkIn(received, '/accept-invite').href).to.equal(link.href);

    const pending = await memberOf(bob.id);
    expect(pending).to.include({ status: 'pending', role: 'operator' });
    const days = (Date.parse(pending?.expires_at ?? '') - Date.now()) / 86_400_000;
    expect(days).to.be.within(6.99, 7.01);
    // No access until accepted.
    expect((await server.api('GET', `/api/auth/token/${tenant}`, { token: bob.token })).status).to.equal(403);
    expect((await server.api('GET', `/api/namespaces/${tenant}`, { token: bob.token })).status).to.equal(403);

    const seen = await status(bob.id, sig);
    expect(seen.status).to.equal(200);
    expect(seen.body).to.include({
      id: bob.id,
      tenant_id: tenant,
      namespace: 'ada',
      email: 'bob@example.com',
      role: 'operator',
      status: 'pending',
      account: true,
    });
    expect((await status(bob.id, 'A'.repeat(43))).status).to.equal(404);
    expect((await status(carol.id, sig)).status).to.equal(404);

    const notMine = await accept(carol.token, sig);
    expect(notMine.status).to.equal(403);
    expect(notMine.body.message).to.match(/another e-mail address/);
    const ok = await accept(bob.token, sig);
    expect(ok.status).to.equal(200);
    expect((await status(bob.id, sig)).body.status).to.equal('accepted');
    expect(await memberOf(bob.id)).to.include({ status: 'accepted', role: 'operator' });
    expect((await server.api('GET', `/api/auth/token/${tenant}`, { token: bob.token })).status).to.equal(200);
    expect((await accept(bob.token, sig)).status).to.equal(409);
    expect((await invite('bob@example.com')).status).to.equal(409);
  });

  it('refuses a second invite while one is valid, and resends a new link once it expired', async () => {
    const dan = await signUp(server, smtp, 'dan');
    const first = await invite('dan@example.com', 'observer');
    expect(first.status).to.equal(200);
    const again = await invite('dan@example.com', 'observer');
    expect(again.status).to.equal(409);
    expect(again.body).to.deep.equal(['email']);
    const db = server.kernel.container.cradle.db;
    const past = new Date(Date.now() - 1000);
    await db('member_invites').where({ tenant_id: tenant, id: dan.id }).update({ expires_at: past });
    await db('namespace_members').where({ tenant_id: tenant, user_id: dan.id }).update({ expires_at: past });
    const oldSig = new URL(first.body.link).searchParams.get('sig') as string;
    expect((await status(dan.id, oldSig)).body.status).to.equal('expired');
    const late = await accept(dan.token, oldSig);
    expect(late.status).to.equal(403);
    expect(late.body.message).to.match(/expired/);

    await mailCount(server, smtp);
    const mail = smtp.waitFor('dan@example.com');
    const resent = await invite('dan@example.com', 'observer');
    expect(resent.status).to.equal(200);
    expect(linkIn(await mail, '/accept-invite').href).to.equal(resent.body.link);
    const sig = new URL(resent.body.link).searchParams.get('sig') as string;
    expect(sig).to.not.equal(oldSig);
    expect((await status(dan.id, oldSig)).status).to.equal(404);
    expect((await accept(dan.token, sig)).status).to.equal(200);
  });

  it('answers invitations of one address sent at once with one link and 409s, never a 500', async () => {
    for (const email of ['race-new@example.com', 'race-account@example.com']) {
      if (email === 'race-account@example.com') await signUp(server, smtp, 'race-account');
      // Three: the number of mails one inviter may send one address in a row before 429.
      const answers = await Promise.all(Array.from({ length: 3 }, () => invite(email)));
      const statuses = answers.map((r) => r.status).sort();
      expect(statuses, email).to.deep.equal([200, 409, 409]);
      for (const r of answers.filter((a) => a.status === 409)) expect(r.body, email).to.deep.equal(['email']);
    }
  });

  it('invites an address without an account: the link leads to sign-up, which joins the namespace', async () => {
    const mail = smtp.waitFor('erin@example.com');
    const res = await invite('erin@example.com', 'administrator');
    expect(res.status).to.equal(200);
    const link = new URL(res.body.link);
    const id = link.searchParams.get('user-id') as string;
    const sig = link.searchParams.get('sig') as string;
    expect((await mail).text).to.contain('create your Gatehouse account');
    const seen = await status(id, sig);
    expect(seen.body).to.include({ status: 'pending', account: false, email: 'erin@example.com' });

    const listed = await server.api('GET', `/api/namespaces/${tenant}/members/invites`, {
      token: owner.token,
    });
    expect(listed.status).to.equal(200);
    expect(listed.body.map((i: { email: string }) => i.email)).to.include('erin@example.com');

    const body = { name: 'Erin', email: 'erin@example.com', username: 'erin', password: 'erin-pass' };
    const forged = await server.api('POST', '/api/register', { body: { ...body, sig: 'B'.repeat(43) } });
    expect(forged.status).to.equal(400);
    expect(forged.body).to.deep.equal(['sig']);
    const otherAddress = await server.api('POST', '/api/register', {
      body: { ...body, email: 'not-erin@example.com', sig },
    });
    expect(otherAddress.status).to.equal(403);
    // Neither attempt left an account behind.
    expect(await server.kernel.container.cradle.db('users').where({ username: 'erin' }).first()).to.equal(
      undefined,
    );

    const before = await mailCount(server, smtp);
    const joined = await server.api('POST', '/api/register', { body: { ...body, sig } });
    expect(joined.status).to.equal(200);
    // The invitation proved the address: no verification mail, sign-in at once, already a member.
    expect(await mailCount(server, smtp)).to.equal(before);
    const erin = await server.login('erin', 'erin-pass');
    expect(erin).to.include({ tenant, role: 'administrator' });
    expect((await status(id, sig)).body.status).to.equal('accepted');
  });

  it('keeps a member added with the community call pending too, and lets administrators withdraw invitations', async () => {
    const fay = await signUp(server, smtp, 'fay');
    const mail = smtp.waitFor('fay@example.com');
    const added = await server.api('POST', `/api/namespaces/${tenant}/members`, {
      token: owner.token,
      body: { email: 'fay@example.com', role: 'observer' },
    });
    expect(added.status).to.equal(200);
    expect(linkIn(await mail, '/accept-invite').searchParams.get('user-id')).to.equal(fay.id);
    expect(await memberOf(fay.id)).to.include({ status: 'pending' });

    const withdrawn = await server.api('DELETE', `/api/namespaces/${tenant}/members/invites/${fay.id}`, {
      token: owner.token,
    });
    expect(withdrawn.status).to.equal(200);
    expect(await memberOf(fay.id)).to.equal(undefined);
    const gone = await server.api('DELETE', `/api/namespaces/${tenant}/members/invites/${fay.id}`, {
      token: owner.token,
    });
    expect(gone.status).to.equal(404);
  });

  it('lets only administrators invite, never above their own role', async () => {
    const gil = await signUp(server, smtp, 'gil');
    await server.kernel.container.cradle
      .db('namespace_members')
      .insert({ tenant_id: tenant, user_id: gil.id, role: 'operator' });
    const token = (await server.api('GET', `/api/auth/token/${tenant}`, { token: gil.token })).body
      .token as string;
    expect((await invite('someone@example.com', 'observer', token)).status).to.equal(403);
    const owned = await invite('someone@example.com', 'owner');
    expect(owned.status).to.equal(400);
    const stranger = await signUp(server, smtp, 'stranger');
    const other = await server.api('POST', `/api/namespaces/${tenant}/members/invites`, {
      token: stranger.token,
      body: { email: 'x@example.com', role: 'observer' },
    });
    expect(other.status).to.equal(403);
    expect((await server.api('GET', `/api/namespaces/${tenant}/members/invites`, { token })).status).to.equal(
      403,
    );
  });
});
