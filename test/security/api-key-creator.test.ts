import { expect } from 'chai';
import { createKey, createTeam, type Team } from '../integration/accounts/team';
import { startServer, type TestServer } from '../support/server';

/**
 * A removed administrator's API keys kept working: whoever left a namespace (or was removed from it) still held the
 * secrets of the keys they made, with the role they had. A key now acts with at most its creator's current role in
 * the namespace: when the creator is removed, leaves, or loses the account, the key stops (401); when the
 * creator's role is lowered, the key's is lowered with it.
 */
describe("security: an API key goes no further than its creator's membership", function () {
  this.timeout(90_000);
  let server: TestServer;
  let team: Team;

  before(async () => {
    server = await startServer({ ssh: false });
    await server.setup();
    team = await createTeam(server, 'keys');
  });
  after(async () => {
    await server?.stop();
  });

  const withKey = (key: string, path: string) => server.api('GET', path, { apiKey: key });
  const support = () => `/api/namespaces/${team.tenant}/support`;

  it("lowers a key with its creator's role, and stops it when the creator is removed", async () => {
    const key = await createKey(server, team.tokens.administrator, 'admin-made', 'administrator');
    expect((await withKey(key, support())).status, 'an administrator call').to.equal(200);

    const demoted = await server.api(
      'PATCH',
      `/api/namespaces/${team.tenant}/members/${team.ids.administrator}`,
      {
        token: team.tokens.owner,
        body: { role: 'observer' },
      },
    );
    expect(demoted.status, JSON.stringify(demoted.body)).to.equal(200);
    expect((await withKey(key, support())).status, 'capped at observer').to.equal(403);
    expect((await withKey(key, '/api/devices')).status, 'what an observer may do').to.equal(200);

    const removed = await server.api(
      'DELETE',
      `/api/namespaces/${team.tenant}/members/${team.ids.administrator}`,
      {
        token: team.tokens.owner,
      },
    );
    expect(removed.status, JSON.stringify(removed.body)).to.equal(200);
    expect((await withKey(key, '/api/devices')).status).to.equal(401);
  });

  it('stops the keys of a member who leaves, and leaves the others alone', async () => {
    const other = await createTeam(server, 'leavers');
    const theirs = await createKey(server, other.tokens.administrator, 'leaver-made', 'operator');
    const owners = await createKey(server, other.tokens.owner, 'owner-made', 'operator');
    const left = await server.api('DELETE', `/api/namespaces/${other.tenant}/members`, {
      token: other.tokens.administrator,
    });
    expect(left.status, JSON.stringify(left.body)).to.equal(200);
    expect((await withKey(theirs, '/api/devices')).status).to.equal(401);
    expect((await withKey(owners, '/api/devices')).status).to.equal(200);
  });
});
