import { type Role, roles } from '@gatehouse/core';
import type { RegisteredRoute } from '@gatehouse/core/http/route';
import { expect } from 'chai';
import { publicKeyData } from '../../support/public-keys';
import { startServer, type TestServer } from '../../support/server';
import { createKey, createTeam, type Team } from '../accounts/team';
import { fillPath, sampleBody } from './requests';

/**
 * Tenant isolation: callers of namespace A (every role, by token and by API key) aim every call that takes an id at
 * the objects of namespace B: its tenant, members, API key and install key, and, where those features are loaded, a public key
 * and a firewall rule created in B. Each such call must answer 403 or 404, and B must be intact afterwards. Calls
 * whose ids B has no object for get well-formed random ids and must simply not fail (no 5xx).
 */
describe('permissions: tenant isolation between two namespaces', function () {
  this.timeout(180_000);
  let server: TestServer;
  let a: Team;
  let b: Team;
  const aKeys = {} as Record<Role, string>;
  let bKey: string;
  let bFingerprint: string | undefined;
  let bRule: string | undefined;
  let bInstallKey: string;
  /** Changes when the key is rotated. */
  let bInstallKeyHint: string;
  const has = (method: string, path: string) =>
    server.kernel.routes.some((r) => r.method === method && r.path === path);

  before(async function () {
    this.timeout(120_000);
    server = await startServer({ ssh: false });
    await server.setup();
    a = await createTeam(server, 'iso-a');
    b = await createTeam(server, 'iso-b');
    for (const role of roles)
      aKeys[role] = await createKey(server, a.tokens.owner, `a-${role.slice(0, 5)}`, role);
    bKey = 'b-secret-key';
    await createKey(server, b.tokens.owner, bKey, 'observer');
    const installKey = await server.api('POST', '/api/namespaces/install-keys', {
      token: b.tokens.owner,
      body: { name: 'b-install-key' },
    });
    if (installKey.status !== 200)
      throw new Error(`install key in B: ${installKey.status} ${JSON.stringify(installKey.body)}`);
    bInstallKey = installKey.body.id;
    bInstallKeyHint = installKey.body.key_hint;
    if (has('POST', '/api/sshkeys/public-keys')) {
      const res = await server.api('POST', '/api/sshkeys/public-keys', {
        token: b.tokens.owner,
        body: {
          data: publicKeyData('b-key'),
          filter: { hostname: '.*' },
          name: 'b-key',
          username: '.*',
        },
      });
      if (res.status !== 200) throw new Error(`public key in B: ${res.status} ${JSON.stringify(res.body)}`);
      bFingerprint = res.body.fingerprint;
    }
    if (has('POST', '/api/firewall/rules')) {
      const res = await server.api('POST', '/api/firewall/rules', {
        token: b.tokens.owner,
        body: {
          action: 'deny',
          active: true,
          filter: { hostname: '.*' },
          priority: 1,
          source_ip: '.*',
          username: '.*',
        },
      });
      if (res.status !== 200)
        throw new Error(`firewall rule in B: ${res.status} ${JSON.stringify(res.body)}`);
      bRule = res.body.id;
    }
  });
  after(async () => {
    await server?.stop();
  });

  /** B's real objects for a route's path parameters; empty when B has none of the kind the route takes. */
  const bValues = (r: RegisteredRoute): Record<string, string> => {
    if (r.path.startsWith('/api/namespaces/api-key')) return { key: bKey };
    if (r.path.startsWith('/api/namespaces/install-keys')) return { id: bInstallKey };
    if (r.path.startsWith('/api/namespaces/')) return { tenant: b.tenant, uid: b.ids.operator };
    if (r.path.includes(':tenant')) return { tenant: b.tenant };
    if (r.path.startsWith('/api/sshkeys/public-keys/') && bFingerprint) return { fingerprint: bFingerprint };
    if (r.path.startsWith('/api/firewall/rules/') && bRule) return { id: bRule };
    return {};
  };
  /** Valid bodies where TypeBox's sample is not (formats, unions), so the request reaches the tenant check. */
  const bodies: Record<string, unknown> = {
    'POST /api/namespaces/:tenant/members': { email: 'iso-a-opera@example.com', role: 'observer' },
    'PATCH /api/namespaces/:tenant/members/:uid': { role: 'observer' },
    'PUT /api/namespaces/:tenant': { name: 'hijacked', settings: { session_record: false } },
    'PATCH /api/namespaces/api-key/:key': { name: 'hijacked' },
  };
  const withIds = (r: RegisteredRoute) => /:[A-Za-z]/.test(r.path) && !r.auth.includes('none');

  it('never lets a caller of A act on B', async () => {
    const leaks: string[] = [];
    for (const r of server.kernel.routes.filter(withIds)) {
      const values = bValues(r);
      const aimsAtB = Object.keys(values).length > 0;
      const path = fillPath(r, values);
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
          const ok = aimsAtB ? [403, 404].includes(res.status) : res.status < 500;
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
    const installKeys = await server.api('GET', '/api/namespaces/install-keys', { token: b.tokens.owner });
    expect(installKeys.body.map((k: { id: string; key_hint: string }) => [k.id, k.key_hint])).to.deep.equal([
      [bInstallKey, bInstallKeyHint],
    ]);
    if (bFingerprint) {
      const pk = await server.api('GET', '/api/sshkeys/public-keys', { token: b.tokens.owner });
      expect(pk.body.map((k: { fingerprint: string }) => k.fingerprint)).to.include(bFingerprint);
    }
    if (bRule) {
      const rule = await server.api('GET', `/api/firewall/rules/${bRule}`, { token: b.tokens.owner });
      expect(rule.status).to.equal(200);
      expect(rule.body.priority).to.equal(1);
    }
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
