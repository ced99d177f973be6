import { PaymentRequired } from '@gatehouse/core';
import { expect } from 'chai';
import { agentAuthRequest } from '../../support/device-keys';
import { type LoginAnswer, startServer, type TestServer } from '../../support/server';
import { otherNamespace, registerDevice } from '../../support/tenants';

type Platform = 'native' | 'docker';

/**
 * The devices API driven through the agent's own registration call: lists, filters, paging,
 * renames, statuses, acceptance rules, tags across the namespace, stats, containers and namespace isolation.
 */
describe('devices: the API', function () {
  this.timeout(30_000);
  let server: TestServer;
  let me: LoginAnswer;
  let other: LoginAnswer;
  let refuseAccept: string | undefined;

  const register = (
    tenant: string,
    n: number,
    opts: { hostname?: string; platform?: Platform; key?: string } = {},
  ) =>
    registerDevice(server, {
      tenant,
      hostname: opts.hostname ?? `node-${n}`,
      mac: `02:00:00:00:10:${String(n).padStart(2, '0')}`,
      keyLabel: opts.key ?? `key-${n}`,
      ...(opts.platform ? { platform: opts.platform } : {}),
    });
  const api = (method: string, path: string, body?: unknown, token = me.token) =>
    server.api(method, path, { token, body });
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');

  before(async () => {
    // Every registration here comes from 127.0.0.1: lift the per-source limits on new devices (tested in security).
    server = await startServer({
      overrides: { limits: { registrationsPerMinute: 1000, pendingPerSource: 1000, pendingPerBlock: 1000 } },
    });
    me = await server.setup();
    other = await otherNamespace(server, me);
    server.kernel.hooks.on('device.beforeAccept', ({ uid }) => {
      if (uid === refuseAccept) throw new PaymentRequired('billing says no');
    });
  });
  after(async () => server?.stop());

  it('registers agents: stable uid, name from hostname or MAC, 404 unknown tenant, 400 malformed', async () => {
    const a = await register(me.tenant, 1, { hostname: 'Web.Example.org' });
    expect(a.uid).to.match(/^[0-9a-f]{64}$/);
    expect(a).to.include({ name: 'web', namespace: 'ada' });
    expect((await register(me.tenant, 1, { hostname: 'Web.Example.org' })).uid).to.equal(a.uid);
    expect((await register(me.tenant, 1, { key: 'another key' })).uid).not.to.equal(a.uid);
    expect((await register(other.tenant, 1)).uid).not.to.equal(a.uid);
    expect((await register(me.tenant, 2, { hostname: '' })).name).to.equal('02-00-00-00-10-02');

    const alias = await server.api(
      'POST',
      '/api/auth/device',
      agentAuthRequest({ tenant: me.tenant, hostname: 'alias', mac: 'aa', keyLabel: 'alias' }),
    );
    expect(alias.status).to.equal(200);

    const unknown = await server.api(
      'POST',
      '/api/devices/auth',
      agentAuthRequest({
        tenant: '00000000-0000-4000-8000-000000000000',
        hostname: 'h',
        mac: 'aa',
        keyLabel: 'alias',
      }),
    );
    expect(unknown.status).to.equal(404);
    const malformed = await server.api('POST', '/api/devices/auth', { raw: '{"info":', headers: {} });
    expect(malformed.status).to.equal(400);
    const missing = await server.api('POST', '/api/devices/auth', { body: { tenant_id: 'nope' } });
    expect(missing.status).to.equal(400);
    expect(missing.body).to.include.members(['info', 'public_key', 'tenant_id']);
  });

  it('lists with status, filter, paging and sorting, and the total in X-Total-Count', async () => {
    const names = ['alpha', 'bravo', 'charlie', 'delta'];
    const uids: string[] = [];
    for (const [i, hostname] of names.entries())
      uids.push((await register(me.tenant, 20 + i, { hostname })).uid);
    for (const uid of uids) expect((await api('PATCH', `/api/devices/${uid}/accept`)).status).to.equal(200);

    const all = await api('GET', '/api/devices');
    expect(all.headers.get('x-total-count')).to.equal('4');
    expect(all.body.every((d: { status: string }) => d.status === 'accepted')).to.equal(true);
    const pending = await api('GET', '/api/devices?status=pending');
    expect(pending.body.length).to.be.greaterThan(0);
    expect(pending.body.every((d: { status: string }) => d.status === 'pending')).to.equal(true);

    const page = await api('GET', '/api/devices?per_page=3&page=2&sort_by=name&order_by=asc');
    expect(page.body.map((d: { name: string }) => d.name)).to.deep.equal(['delta']);
    expect(page.headers.get('x-total-count')).to.equal('4');
    const asc = await api('GET', '/api/devices?sort_by=name&order_by=asc');
    expect(asc.body.map((d: { name: string }) => d.name)).to.deep.equal(names);

    const filter = b64([{ type: 'property', params: { name: 'name', operator: 'contains', value: 'rav' } }]);
    const filtered = await api('GET', `/api/devices?filter=${encodeURIComponent(filter)}`);
    expect(filtered.body.map((d: { name: string }) => d.name)).to.deep.equal(['bravo']);

    for (const bad of [
      'not-base64-json',
      b64({ not: 'a list' }),
      b64([{ type: 'property', params: { name: 'nope', operator: 'eq', value: 1 } }]),
      b64([{ type: 'property', params: { name: 'name', operator: 'gt', value: 1 } }]),
      b64([{ type: 'property', params: { name: 'online', operator: 'bool', value: 'maybe' } }]),
    ]) {
      const res = await api('GET', `/api/devices?filter=${encodeURIComponent(bad)}`);
      expect(res.status, bad).to.equal(400);
    }
    for (const q of ['page=0', 'per_page=101', 'status=gone', 'sort_by=secret', 'order_by=up']) {
      expect((await api('GET', `/api/devices?${q}`)).status, q).to.equal(400);
    }
  });

  it('renames and sets public_url, refusing a name another device has with 409', async () => {
    const a = await register(me.tenant, 40, { hostname: 'rename-me' });
    await register(me.tenant, 41, { hostname: 'taken' });
    const renamed = await api('PUT', `/api/devices/${a.uid}`, { name: 'renamed', public_url: true });
    expect(renamed.status).to.equal(200);
    expect(renamed.body).to.include({ name: 'renamed', public_url: true });
    const clash = await api('PUT', `/api/devices/${a.uid}`, { name: 'TAKEN' });
    expect(clash.status).to.equal(409);
    expect(clash.body).to.deep.equal(['name']);
    for (const name of ['has space', 'dot.ted', '-dash', 'x'.repeat(64), '']) {
      expect((await api('PUT', `/api/devices/${a.uid}`, { name })).status, name).to.equal(400);
    }
  });

  it('accepts with a 409 on a name clash among accepted devices and a 402 from device.beforeAccept', async () => {
    const a = await register(me.tenant, 50, { hostname: 'twin' });
    const b = await register(me.tenant, 51, { hostname: 'twin' });
    expect((await api('PATCH', `/api/devices/${a.uid}/accept`)).status).to.equal(200);
    const clash = await api('PATCH', `/api/devices/${b.uid}/accept`);
    expect(clash.status).to.equal(409);
    expect(clash.body).to.deep.equal(['name']);
    expect((await api('GET', `/api/devices/${b.uid}`)).body.status).to.equal('pending');

    const c = await register(me.tenant, 52, { hostname: 'billed' });
    refuseAccept = c.uid;
    const refused = await api('PATCH', `/api/devices/${c.uid}/accept`);
    expect(refused.status).to.equal(402);
    expect(refused.body.message).to.equal('billing says no');
    refuseAccept = undefined;
    expect((await api('PATCH', `/api/devices/${c.uid}/accept`)).status).to.equal(200);
  });

  it('changes status through every path value and removes softly', async () => {
    const d = await register(me.tenant, 60, { hostname: 'statuses' });
    const path = `/api/devices/${d.uid}`;
    for (const [value, status] of [
      ['accept', 'accepted'],
      ['reject', 'rejected'],
      ['pending', 'pending'],
      ['unused', 'unused'],
    ]) {
      const res = await api('PATCH', `${path}/${value}`);
      expect(res.status, value).to.equal(200);
      expect(res.body.status).to.equal(status);
    }
    expect((await api('PATCH', `${path}/removed`)).status).to.equal(400);
    expect((await api('DELETE', path)).status).to.equal(200);
    expect((await api('GET', path)).body.status).to.equal('removed');
    const removed = await api('GET', '/api/devices?status=removed');
    expect(removed.body.map((x: { uid: string }) => x.uid)).to.include(d.uid);
  });

  it('tags devices: 1 to 3 unique tags of 3 to 255 characters, 406 beyond 3', async () => {
    const d = await register(me.tenant, 70, { hostname: 'tagged' });
    const tags = `/api/devices/${d.uid}/tags`;
    expect((await api('POST', tags, { tag: 'prod' })).status).to.equal(200);
    expect((await api('POST', tags, { tag: 'prod' })).status).to.equal(409);
    expect((await api('POST', tags, { tag: 'eu-west' })).status).to.equal(200);
    expect((await api('POST', tags, { tag: 'web' })).status).to.equal(200);
    expect((await api('POST', tags, { tag: 'fourth' })).status).to.equal(406);
    expect((await api('GET', `/api/devices/${d.uid}`)).body.tags).to.deep.equal(['prod', 'eu-west', 'web']);

    for (const tag of ['ab', 'x'.repeat(256), 'with/slash', 'with space', 42]) {
      expect((await api('POST', tags, { tag })).status, String(tag)).to.equal(400);
    }
    expect((await api('PUT', tags, { tags: ['a1b', 'c2d', 'e3f', 'g4h'] })).status).to.equal(406);
    expect((await api('PUT', tags, { tags: ['dup', 'dup'] })).status).to.equal(400);
    expect((await api('PUT', tags, { tags: [] })).status).to.equal(400);
    expect((await api('PUT', tags, {})).status).to.equal(400);
    expect((await api('PUT', tags, { tags: ['prod', 'dbs'] })).status).to.equal(200);
    expect((await api('DELETE', `${tags}/dbs`)).status).to.equal(200);
    expect((await api('DELETE', `${tags}/dbs`)).status).to.equal(404);
    expect((await api('GET', `/api/devices/${d.uid}`)).body.tags).to.deep.equal(['prod']);

    const e = await register(me.tenant, 71, { hostname: 'tagged-too' });
    await api('PUT', `/api/devices/${e.uid}/tags`, { tags: ['prod', 'staging'] });
    expect((await api('GET', '/api/tags')).body).to.deep.equal(['prod', 'staging']);
    const onlyProd = b64([
      { type: 'property', params: { name: 'tags', operator: 'contains', value: 'staging' } },
    ]);
    const byTag = await api('GET', `/api/devices?status=pending&filter=${encodeURIComponent(onlyProd)}`);
    expect(byTag.body.map((x: { uid: string }) => x.uid)).to.deep.equal([e.uid]);
    expect(byTag.headers.get('x-total-count')).to.equal('1');
    /** The total of a one-tag filter (a kept count) for `status`. */
    const tagTotal = async (tag: string, status = 'pending') => {
      const filter = b64([{ type: 'property', params: { name: 'tags', operator: 'contains', value: tag } }]);
      const res = await api('GET', `/api/devices?status=${status}&filter=${encodeURIComponent(filter)}`);
      expect(Number(res.headers.get('x-total-count')), tag).to.equal(res.body.length);
      return res.body.length;
    };
    expect(await tagTotal('prod')).to.equal(2);

    expect((await api('PUT', '/api/tags/prod', { tag: 'staging' })).status).to.equal(409);
    expect((await api('PUT', '/api/tags/nope', { tag: 'other' })).status).to.equal(404);
    expect((await api('PUT', '/api/tags/prod', { tag: 'x' })).status).to.equal(400);
    expect((await api('PUT', '/api/tags/prod', { tag: 'production' })).status).to.equal(200);
    expect((await api('GET', '/api/tags')).body).to.deep.equal(['production', 'staging']);
    expect((await api('GET', `/api/devices/${d.uid}`)).body.tags).to.deep.equal(['production']);
    expect([await tagTotal('prod'), await tagTotal('production'), await tagTotal('staging')]).to.deep.equal([
      0, 2, 1,
    ]);
    expect((await api('DELETE', '/api/tags/production')).status).to.equal(200);
    expect(await tagTotal('production')).to.equal(0);
    expect((await api('DELETE', '/api/tags/production')).status).to.equal(404);
    expect((await api('GET', '/api/tags')).body).to.deep.equal(['staging']);
    expect((await api('GET', `/api/devices/${e.uid}`)).body.tags).to.deep.equal(['staging']);
  });

  it('lists an agent that reports docker as a device; /api/containers holds only connector containers', async () => {
    const d = await register(me.tenant, 80, { hostname: 'box', platform: 'docker' });
    expect((await api('GET', `/api/containers/${d.uid}`)).status).to.equal(404);
    const asDevice = await api('GET', `/api/devices/${d.uid}`);
    expect(asDevice.status).to.equal(200);
    expect(asDevice.body.info.platform).to.equal('docker');
    const pending = await api('GET', '/api/devices?status=pending&per_page=100');
    expect(pending.body.map((x: { uid: string }) => x.uid)).to.include(d.uid);
    expect((await api('GET', '/api/containers?status=pending')).body).to.deep.equal([]);
    expect((await api('PATCH', `/api/containers/${d.uid}/accept`)).status).to.equal(404);
    expect((await api('DELETE', `/api/devices/${d.uid}`)).status).to.equal(200);

    // A container a container-engine connector exposes (the enterprise edition writes these rows): the same calls.
    const db = server.kernel.container.cradle.db;
    const c = 'c0'.repeat(32);
    await db('devices').insert({
      uid: c,
      tenant_id: me.tenant,
      name: 'web-1',
      kind: 'container',
      identity: JSON.stringify({ mac: '02:42:ac:11:00:02' }),
      info: JSON.stringify({
        id: 'alpine',
        pretty_name: 'Alpine',
        version: '1',
        arch: 'amd64',
        platform: 'docker',
      }),
      public_key: 'connector-key',
    });
    expect((await api('GET', `/api/devices/${c}`)).status).to.equal(404);
    const waiting = await api('GET', '/api/containers?status=pending');
    expect(waiting.body.map((x: { uid: string }) => x.uid)).to.deep.equal([c]);
    expect((await api('PATCH', `/api/containers/${c}/accept`)).status).to.equal(200);
    expect((await api('PUT', `/api/containers/${c}`, { name: 'web-2' })).body.name).to.equal('web-2');
    expect((await api('POST', `/api/containers/${c}/tags`, { tag: 'docker' })).status).to.equal(200);
    const listed = await api('GET', '/api/containers');
    expect(listed.body[0]).to.include({ uid: c, status: 'accepted', name: 'web-2' });
    expect(listed.body[0].info.platform).to.equal('docker');
    expect((await api('DELETE', `/api/containers/${c}`)).status).to.equal(200);
  });

  it('counts stats across devices and containers', async () => {
    const stats = await api('GET', '/api/stats');
    expect(stats.status).to.equal(200);
    const count = async (status: string) =>
      Number((await api('GET', `/api/devices?status=${status}`)).headers.get('x-total-count')) +
      Number((await api('GET', `/api/containers?status=${status}`)).headers.get('x-total-count'));
    expect(stats.body).to.deep.equal({
      registered_devices: await count('accepted'),
      online_devices: 0,
      pending_devices: await count('pending'),
      rejected_devices: await count('rejected'),
      active_sessions: 0,
    });
  });

  it('never reaches a device of another namespace by id', async () => {
    const mine = await register(me.tenant, 90, { hostname: 'private' });
    const theirs = await register(other.tenant, 91, { hostname: 'theirs' });
    for (const [method, path, body] of [
      ['GET', `/api/devices/${mine.uid}`],
      ['PUT', `/api/devices/${mine.uid}`, { name: 'stolen' }],
      ['DELETE', `/api/devices/${mine.uid}`],
      ['PATCH', `/api/devices/${mine.uid}/accept`],
      ['PATCH', `/api/devices/${mine.uid}/reject`],
      ['POST', `/api/devices/${mine.uid}/tags`, { tag: 'mine' }],
      ['PUT', `/api/devices/${mine.uid}/tags`, { tags: ['mine'] }],
      ['GET', `/api/devices/${mine.uid}/tunnels`],
      ['POST', `/api/devices/${mine.uid}/tunnels`, { host: '127.0.0.1', port: 80, ttl: 60 }],
    ] as [string, string, unknown?][]) {
      const res = await api(method, path, body, other.token);
      expect(res.status, `${method} ${path}`).to.equal(404);
    }
    const theirList = await api('GET', '/api/devices?status=pending', undefined, other.token);
    const theirUids = theirList.body.map((x: { uid: string }) => x.uid);
    expect(theirUids).to.include(theirs.uid);
    expect(theirUids).not.to.include(mine.uid);
    expect((await api('GET', `/api/devices/${mine.uid}`)).body.status).to.equal('pending');
    expect((await api('GET', '/api/devices/not-a-uid')).status).to.equal(400);
  });

  it('refuses device tokens and anonymous callers on the user calls', async () => {
    const d = await register(me.tenant, 95);
    expect((await server.api('GET', '/api/devices')).status).to.equal(401);
    expect((await server.api('GET', '/api/devices', { token: d.token })).status).to.equal(403);
    expect((await server.api('GET', '/api/stats', { token: 'forged.jwt.token' })).status).to.equal(401);
  });
});
