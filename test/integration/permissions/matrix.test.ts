import { type Role, roleAtLeast, roles } from '@gatehouse/core';
import type { RegisteredRoute } from '@gatehouse/core/http/route';
import { permissionMarkdown, permissionMatrix } from '@gatehouse/core/permissions';
import { expect } from 'chai';
import { startServer, type TestServer } from '../../support/server';
import { createKey, createTeam, type Team } from '../accounts/team';
import { fillPath } from './requests';

/**
 * The permission matrix as a table, generated from every route the kernel has (the accounts calls and those of
 * every other feature as they land): missing credentials are 401, a role below the route's is 403, a caller kind the
 * route does not accept is 403, and a role at or above it gets past the permission check.
 */
describe('permissions: every route x every role and caller kind', function () {
  this.timeout(120_000);
  let server: TestServer;
  let team: Team;
  const keys = {} as Record<Role, string>;
  let routes: RegisteredRoute[];

  before(async () => {
    server = await startServer({ ssh: false });
    await server.setup();
    team = await createTeam(server, 'matrix');
    for (const role of roles)
      keys[role] = await createKey(server, team.tokens.owner, `matrix-${role.slice(0, 5)}`, role);
    routes = server.kernel.routes;
  });
  after(async () => {
    await server?.stop();
  });

  const label = (r: RegisteredRoute) => `${r.method} ${r.path}`;
  /** Internal calls (server to server) may also hide from outside callers behind a 404. */
  const internalOnly = (r: RegisteredRoute) => r.auth.every((k) => k === 'internal');
  const refused = (r: RegisteredRoute, status: number, expected: number) =>
    status === expected || (internalOnly(r) && status === 404);
  const call = (r: RegisteredRoute, opts: { token?: string; apiKey?: string; path?: string }) =>
    server.api(r.method, opts.path ?? fillPath(r, { tenant: team.tenant }), {
      token: opts.token,
      apiKey: opts.apiKey,
      // An invalid body: a caller who passes the permission check gets 400, and nothing is changed.
      ...(r.schema.body ? { raw: '[]' } : {}),
    });

  it('publishes one matrix row per route, with the roles that pass', () => {
    const rows = permissionMatrix(routes);
    expect(rows).to.have.length(routes.length);
    const del = rows.find((r) => r.method === 'DELETE' && r.path === '/api/namespaces/{tenant}');
    expect(del).to.deep.include({ role: 'owner', roles: ['owner'] });
    expect(del?.callers).to.include({ user: true, apiKey: true, none: false });
    const invite = rows.find((r) => r.method === 'POST' && r.path === '/api/namespaces/{tenant}/members');
    expect(invite?.callers, 'invite takes a user token only').to.include({ user: true, apiKey: false });
    expect(permissionMarkdown(rows).split('\n')).to.have.length(rows.length + 2);
  });

  it('answers in GET /info, for the console, the role of every member call the router checks', async () => {
    const res = await server.api('GET', '/info');
    const listed = (res.body as { permissions: { method: string; path: string; role: string }[] })
      .permissions;
    const checked = permissionMatrix(routes).filter((r) => r.role && r.callers.user && !r.instanceAdmin);
    expect(listed.map((p) => `${p.method} ${p.path} ${p.role}`)).to.deep.equal(
      checked.map((r) => `${r.method} ${r.path} ${r.role}`),
    );
    expect(listed).to.deep.include({
      method: 'PATCH',
      path: '/api/devices/{uid}/accept',
      summary: 'Accept a device',
      role: 'administrator',
    });
  });

  it('answers 401 to every non-public call without credentials', async () => {
    const wrong: string[] = [];
    for (const r of routes.filter((x) => !x.auth.includes('none'))) {
      const res = await call(r, {});
      if (!refused(r, res.status, 401)) wrong.push(`${label(r)} -> ${res.status}`);
    }
    expect(wrong).to.deep.equal([]);
  });

  it('answers 403 to every role below the route minimum, by user token and by API key', async () => {
    const wrong: string[] = [];
    for (const r of routes.filter((x) => x.role)) {
      for (const role of roles.filter((have) => !roleAtLeast(have, r.role as Role))) {
        if (r.auth.includes('user')) {
          const res = await call(r, { token: team.tokens[role] });
          if (res.status !== 403) wrong.push(`${label(r)} as ${role} token -> ${res.status}`);
        }
        if (r.auth.includes('apiKey')) {
          const res = await call(r, { apiKey: keys[role] });
          if (res.status !== 403) wrong.push(`${label(r)} as ${role} key -> ${res.status}`);
        }
      }
    }
    expect(wrong).to.deep.equal([]);
  });

  it('answers 403 to caller kinds a route does not accept', async () => {
    const wrong: string[] = [];
    for (const r of routes.filter((x) => !x.auth.includes('none'))) {
      if (!r.auth.includes('apiKey')) {
        const res = await call(r, { apiKey: keys.owner });
        if (!refused(r, res.status, 403)) wrong.push(`${label(r)} by API key -> ${res.status}`);
      }
      if (!r.auth.includes('user')) {
        const res = await call(r, { token: team.tokens.owner });
        if (!refused(r, res.status, 403)) wrong.push(`${label(r)} by user token -> ${res.status}`);
      }
    }
    expect(wrong).to.deep.equal([]);
  });

  it('lets every role at or above the minimum past the permission check', async () => {
    const wrong: string[] = [];
    for (const r of routes.filter((x) => x.role && (x.auth.includes('user') || x.auth.includes('apiKey')))) {
      // Only calls that cannot change anything: reads, and writes whose body is refused by validation.
      if (r.method !== 'GET' && !r.schema.body) continue;
      for (const role of roles.filter((have) => roleAtLeast(have, r.role as Role))) {
        const res = r.auth.includes('user')
          ? await call(r, { token: team.tokens[role] })
          : await call(r, { apiKey: keys[role] });
        if (res.status === 401 || res.status === 403 || res.status >= 500)
          wrong.push(`${label(r)} as ${role} -> ${res.status}`);
      }
    }
    expect(wrong).to.deep.equal([]);
  });

  it('answers the accounts calls as the table says, for every role', async () => {
    const t = team.tenant;
    const table: [string, string, Record<Role, number>][] = [
      ['GET', `/api/namespaces/${t}`, { owner: 200, administrator: 200, operator: 200, observer: 200 }],
      [
        'GET',
        `/api/namespaces/${t}/support`,
        { owner: 200, administrator: 200, operator: 403, observer: 403 },
      ],
      ['GET', '/api/namespaces/api-key', { owner: 200, administrator: 200, operator: 403, observer: 403 }],
      ['GET', '/api/namespaces', { owner: 200, administrator: 200, operator: 200, observer: 200 }],
      ['GET', '/api/auth/user', { owner: 200, administrator: 200, operator: 200, observer: 200 }],
      ['PUT', `/api/namespaces/${t}`, { owner: 200, administrator: 200, operator: 403, observer: 403 }],
    ];
    for (const [method, path, expected] of table) {
      for (const role of roles) {
        const res = await server.api(method, path, {
          token: team.tokens[role],
          ...(method === 'PUT' ? { body: {} } : {}),
        });
        expect(res.status, `${method} ${path} as ${role}`).to.equal(expected[role]);
      }
    }
  });
});
