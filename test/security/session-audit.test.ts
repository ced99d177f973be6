import { expect } from 'chai';
import { createKey, createTeam, type Team } from '../integration/accounts/team';
import { agentAuthRequest } from '../support/device-keys';
import { startServer, type TestServer } from '../support/server';

/**
 * A security review found that the session audit could be forged. Any device token, even of an anonymous pending device, could append
 * recording entries to any session of its namespace and mark sessions authenticated; so could operators. Now only
 * the device carrying a session writes its recording, and only the gateway (over the internal listener) marks a
 * session authenticated.
 */
describe('security: nobody forges the session audit', function () {
  this.timeout(60_000);
  let server: TestServer;
  let team: Team;
  let carrier: { uid: string; token: string };
  let stranger: { uid: string; token: string };
  let session: string;
  let closedSession: string;

  const register = async (label: string, mac: string) => {
    const res = await server.api(
      'POST',
      '/api/devices/auth',
      agentAuthRequest({ tenant: team.tenant, hostname: label, mac, keyLabel: `audit-${label}` }),
    );
    expect(res.status).to.equal(200);
    return res.body as { uid: string; token: string };
  };
  const entry = (uid: string) => ({ uid, seat: 0, message: 'forged output\r\n', width: 80, height: 24 });
  const records = async (uid: string) =>
    (await server.api('GET', `/api/sessions/${uid}/records/0`, { token: team.tokens.owner }))
      .body as unknown[];
  const authenticated = async (uid: string) =>
    (await server.api('GET', `/api/sessions/${uid}`, { token: team.tokens.owner })).body
      .authenticated as boolean;

  before(async () => {
    server = await startServer({ ssh: false });
    team = await createTeam(server, 'audit');
    carrier = await register('carrier', '02:00:00:00:88:01');
    expect(
      (await server.api('PATCH', `/api/devices/${carrier.uid}/accept`, { token: team.tokens.owner })).status,
    ).to.equal(200);
    // A device nobody accepted: anyone with the tenant id can make one.
    stranger = await register('stranger', '02:00:00:00:88:02');
    expect(
      (
        await server.api('PUT', `/api/users/security/${team.tenant}`, {
          token: team.tokens.owner,
          body: { session_record: true },
        })
      ).status,
    ).to.equal(200);
    const sessions = server.kernel.container.cradle.sessions;
    const open = () =>
      sessions.open({
        tenantId: team.tenant,
        deviceUid: carrier.uid,
        username: 'root',
        ip: '10.1.1.1',
        type: 'term',
        recorded: false,
      });
    session = await open();
    closedSession = await open();
    await sessions.markClosed(team.tenant, closedSession);
  });
  after(async () => server?.stop());

  it('lets no other device, pending or accepted, write a session recording', async () => {
    const res = await server.api('POST', `/api/sessions/${session}/records/0`, {
      token: stranger.token,
      body: entry(session),
    });
    expect(res.status).to.equal(404);
    expect(await records(session)).to.deep.equal([]);
  });

  it('lets no user or API key write a recording, whatever their role', async () => {
    for (const token of [team.tokens.owner, team.tokens.operator, team.tokens.administrator]) {
      const res = await server.api('POST', `/api/sessions/${session}/records/0`, {
        token,
        body: entry(session),
      });
      expect(res.status).to.equal(403);
    }
    const key = await createKey(server, team.tokens.owner, 'audit-key-1', 'owner');
    const byKey = await server.api('POST', `/api/sessions/${session}/records/0`, {
      apiKey: key,
      body: entry(session),
    });
    expect(byKey.status).to.equal(403);
    expect(await records(session)).to.deep.equal([]);
  });

  it('lets the carrying device record its live session, and not a closed one', async () => {
    const ok = await server.api('POST', `/api/sessions/${session}/records/0`, {
      token: carrier.token,
      body: entry(session),
    });
    expect(ok.status).to.equal(200);
    expect(await records(session)).to.have.length(1);
    const closed = await server.api('POST', `/api/sessions/${closedSession}/records/0`, {
      token: carrier.token,
      body: entry(closedSession),
    });
    expect(closed.status).to.equal(422);
    expect(await records(closedSession)).to.deep.equal([]);
  });

  it('lets nobody but the gateway mark a session authenticated', async () => {
    const key = await createKey(server, team.tokens.owner, 'audit-key-2', 'owner');
    for (const auth of [
      { token: carrier.token },
      { token: stranger.token },
      { token: team.tokens.operator },
      { token: team.tokens.owner },
      { apiKey: key },
    ]) {
      const res = await server.api('POST', `/api/sessions/${session}`, {
        ...auth,
        body: { authenticated: true },
      });
      expect(res.status, JSON.stringify(auth).slice(0, 40)).to.equal(404);
    }
    expect(await authenticated(session)).to.equal(false);
    // The gateway's way: the internal listener, loopback only.
    const res = await fetch(`${server.kernel.internalUrl}/api/sessions/${session}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ authenticated: true }),
    });
    expect(res.status).to.equal(200);
    expect(await authenticated(session)).to.equal(true);
  });
});
