import { type Role, roles } from '@gatehouse/core';
import type { RegisteredRoute } from '@gatehouse/core/http/route';
import { expect } from 'chai';
import { startServer, type TestServer } from '../../support/server';
import { createKey, createTeam, type Team } from '../accounts/team';
import { fillPath, sampleBody } from './requests';

/**
 * Tenant isolation: callers of namespace A (every role, by token and by API key) aim every call that takes an id at
 * the objects of namespace B. No answer may succeed; the accounts calls must answer exactly 403 or 404; and B must
 * be intact afterwards.
 */
describe('permissions: tenant isolation between two namespaces', function () {
  this.timeout(180_000);
  let server: TestServer;
  let a: Team;
  let b: Team;
  const aKeys = {} as Record<Role, string>;
  let bKey: string;

  before(async () => {
    server = await startServer({ ssh: false });
    await server.setup();
    a = await createTeam(server, 'iso-a');
    b = await createTeam(server, 'iso-b');
    for (const role of roles)
      aKeys[role] = await createKey(server, a.tokens.owner, `a-${role.slice(0, 5)}`, role);
    bKey = 'b-secret-key';
    await createKey(server, b.tokens.owner, bKey, 'observer');
  });
  after(async () => {
    await server?.stop();
  });

  /** B's objects by path parameter name: its tenant, a member, its key. */
  const bValues = () => ({ tenant: b.tenant, uid: b.ids.operator, id: b.ids.operator, key: bKey });
  /** Valid bodies where TypeBox's sample is not (formats, unions), so the request reaches the tenant check. */
  const bodies: Record<string, unknown> = {
    'POST /api/namespaces/:tenant/members': { email: 'iso-a-opera@example.com', role: 'observer' },
    'PATCH /api/namespaces/:tenant/members/:uid': { role: 'observer' },
    'PUT /api/namespaces/:tenant': { name: 'hijacked', settings: { session_record: false } },
    'PATCH /api/namespaces/api-key/:key': { name: 'hijacked' },
  };
  const withIds = (r: RegisteredRoute) => /:[A-Za-z]/.test(r.path) && !r.auth.includes('none');
  const accounts = (r: RegisteredRoute) =>
    r.path.startsWith('/api/namespaces/') ||
    r.path.startsWith('/api/auth/token') ||
    r.path.startsWith('/api/token');

  it('never lets a caller of A act on B', async () => {
    const leaks: string[] = [];
    for (const r of server.kernel.routes.filter(withIds)) {
      const path = fillPath(r, bValues());
      for (const role of roles) {
        const callers = [
          ...(r.auth.includes('user') ? [{ token: a.tokens[role], who: `${role} token` }] : []),
          ...(r.auth.includes('apiKey') ? [{ apiKey: aKeys[role], who: `${role} key` }] : []),
        ];
        for (const c of callers) {
          const res = await server.api(r.method, path, {
            token: c.token,
            apiKey: c.apiKey,
            body: bodies[`${r.method} ${r.path}`] ?? sampleBody(r),
          });
          const ok = accounts(r) ? [403, 404].includes(res.status) : res.status >= 400 && res.status < 500;
          if (!ok)
            leaks.push(`${r.method} ${path} as A's ${c.who} -> ${res.status} ${JSON.stringify(res.body)}`);
        }
      }
    }
    expect(leaks).to.deep.equal([]);
  });

  it('left B whole: namespace, members and key', async () => {
    const ns = await server.api('GET', `/api/namespaces/${b.tenant}`, { token: b.tokens.owner });
    expect(ns.status).to.equal(200);
    expect(ns.body.name).to.equal('iso-b-ns');
    expect(ns.body.members).to.have.length(4);
    expect(ns.body.members.find((m: { id: string }) => m.id === b.ids.operator)?.role).to.equal('operator');
    const keys = await server.api('GET', '/api/namespaces/api-key', { token: b.tokens.owner });
    expect(keys.body.map((k: { name: string }) => k.name)).to.include(bKey);
  });

  it("does not list B's namespace or keys to A", async () => {
    for (const role of roles) {
      const list = await server.api('GET', '/api/namespaces', { token: a.tokens[role] });
      expect(list.body.map((n: { tenant_id: string }) => n.tenant_id)).to.not.include(b.tenant);
      const byKey = await server.api('GET', '/api/namespaces', { apiKey: aKeys[role] });
      expect(byKey.body.map((n: { tenant_id: string }) => n.tenant_id)).to.deep.equal([a.tenant]);
    }
    const keys = await server.api('GET', '/api/namespaces/api-key', { token: a.tokens.owner });
    expect(keys.body.map((k: { name: string }) => k.name)).to.not.include(bKey);
  });
});
