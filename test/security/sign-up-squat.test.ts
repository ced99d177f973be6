import { expect } from 'chai';
import { linkIn, signUp } from '../integration/cloud/mail';
import { startServer, type TestServer } from '../support/server';
import { startSmtp, type TestSmtp } from '../support/smtp';

/**
 * Anyone could sign up (cloud) with someone else's e-mail address, or a username they want, and never verify it:
 * the account held both until the real owner reset its password. An account nobody verified within the
 * verification window (24 hours) now holds neither: a new sign-up that names them takes them, and the stale
 * account goes. Within the window, and for any verified account, nothing changes.
 */
describe('security: an unverified sign-up does not hold an address or a username (cloud)', function () {
  this.timeout(90_000);
  let smtp: TestSmtp;
  let server: TestServer;

  before(async () => {
    smtp = await startSmtp();
    server = await startServer({
      edition: 'cloud',
      ssh: false,
      overrides: {
        smtp: { url: smtp.url, from: 'Gatehouse <gh@test>' },
        limits: { registrationsPerMinute: 1000, maxNamespaces: -1 },
      },
    });
    await server.setup();
  });
  after(async () => {
    await server?.stop();
    await smtp?.stop();
  });

  const register = (username: string, email: string, password = 'the-real_one1') =>
    server.api('POST', '/api/register', { body: { name: `${username} name`, username, email, password } });
  const login = (username: string, password: string) =>
    server.api('POST', '/api/login', { body: { username, password } });
  /** The account was made `hours` ago, as if that long had passed since. */
  const age = (username: string, hours: number) =>
    server.kernel.container.cradle
      .db('users')
      .where({ username })
      .update({ created_at: new Date(Date.now() - hours * 3600_000) });

  it('holds them while the verification link is still good', async () => {
    expect((await register('squatter1', 'victim1@example.com', 'squat_pass1')).status).to.equal(200);
    const clash = await register('victim1', 'victim1@example.com');
    expect(clash.status).to.equal(409);
    expect(clash.body).to.deep.equal(['email']);
  });

  it("lets the real owner's sign-up take an address and a username no one verified in time", async () => {
    expect((await register('wanted', 'victim2@example.com', 'squat_pass1')).status).to.equal(200);
    await age('wanted', 25);
    await server.kernel.container.cradle.outbox.drained();
    const mail = smtp.waitFor('victim2@example.com');
    const taken = await register('wanted', 'victim2@example.com');
    expect(taken.status, JSON.stringify(taken.body)).to.equal(200);
    const link = linkIn(await mail, '/validation_account');
    expect((await server.api('GET', `/api/user/validation_account${link.search}`)).status).to.equal(200);
    expect((await login('wanted', 'the-real_one1')).status).to.equal(200);
    expect((await login('wanted', 'squat_pass1')).status, "the squatter's account is gone").to.equal(401);
  });

  it('never takes them from a verified account, however old', async () => {
    await signUp(server, smtp, 'settled', 'settled@example.com');
    await age('settled', 24 * 400);
    const clash = await register('settled', 'settled@example.com');
    expect(clash.status).to.equal(409);
    expect(clash.body).to.have.members(['username', 'email']);
    expect((await login('settled', 'sign-up_Pass1')).status).to.equal(200);
  });
});
