import { expect } from 'chai';
import { type LoginAnswer, startServer, type TestServer } from '../../support/server';
import { otherNamespace, registerDevice } from '../../support/tenants';

/**
 * The device list's fleet filters: operating system (info.id, info.pretty_name), online as the API shows it, a
 * search across name, tag and address, and the operating systems offered to filter on, each within the
 * caller's namespace only.
 */
describe('devices: fleet filters and operating systems', function () {
  this.timeout(30_000);
  let server: TestServer;
  let me: LoginAnswer;
  let other: LoginAnswer;

  const register = (tenant: string, n: number, hostname: string, os?: { id: string; pretty_name: string }) =>
    registerDevice(server, {
      tenant,
      hostname,
      mac: `02:00:00:00:20:${String(n).padStart(2, '0')}`,
      keyLabel: `fleet-${tenant}-${n}`,
      ...(os ? { os } : {}),
    });
  const api = (method: string, path: string, body?: unknown, token = me.token) =>
    server.api(method, path, { token, body });
  const b64 = (v: unknown) => encodeURIComponent(Buffer.from(JSON.stringify(v)).toString('base64'));
  const prop = (name: string, operator: string, value: unknown) => ({
    type: 'property',
    params: { name, operator, value },
  });
  const names = (body: { name: string }[]) => body.map((d) => d.name).sort();
  const alpine = { id: 'alpine', pretty_name: 'Alpine Linux v3.20' };

  before(async () => {
    server = await startServer({
      overrides: { limits: { registrationsPerMinute: 1000, pendingPerSource: 1000, pendingPerBlock: 1000 } },
    });
    me = await server.setup();
    other = await otherNamespace(server, me);

    const web = await register(me.tenant, 1, 'web-1');
    const db = await register(me.tenant, 2, 'db-1', alpine);
    await register(me.tenant, 3, 'cache-1', alpine);
    for (const d of [web, db])
      expect((await api('PATCH', `/api/devices/${d.uid}/accept`)).status).to.equal(200);
    expect((await api('POST', `/api/devices/${db.uid}/tags`, { tag: 'production' })).status).to.equal(200);
    // Another namespace's devices, one of them on an operating system only it runs.
    await register(other.tenant, 1, 'web-other', { id: 'fedora', pretty_name: 'Fedora Linux 40' });
  });
  after(async () => server?.stop());

  it('lists the operating systems of one status with counts, most used first, of this namespace only', async () => {
    const accepted = await api('GET', '/api/devices/os');
    expect(accepted.status).to.equal(200);
    expect(accepted.body).to.deep.equal([
      { id: 'alpine', pretty_name: 'Alpine Linux v3.20', count: 1 },
      { id: 'debian', pretty_name: 'Debian GNU/Linux 12', count: 1 },
    ]);
    const pending = await api('GET', '/api/devices/os?status=pending');
    expect(pending.body).to.deep.equal([{ id: 'alpine', pretty_name: 'Alpine Linux v3.20', count: 1 }]);
    expect((await api('GET', '/api/devices/os?status=pending', undefined, other.token)).body).to.deep.equal([
      { id: 'fedora', pretty_name: 'Fedora Linux 40', count: 1 },
    ]);
    expect((await api('GET', '/api/containers/os')).body).to.deep.equal([]);
    expect((await api('GET', '/api/devices/os?status=sideways')).status).to.equal(400);
    expect((await server.api('GET', '/api/devices/os')).status).to.equal(401);
  });

  it('filters on info.id and info.pretty_name, and refuses operators that do not fit them', async () => {
    const byId = await api('GET', `/api/devices?filter=${b64([prop('info.id', 'eq', 'alpine')])}`);
    expect(byId.status).to.equal(200);
    expect(names(byId.body)).to.deep.equal(['db-1']);
    expect(byId.headers.get('x-total-count')).to.equal('1');
    const byName = await api(
      'GET',
      `/api/devices?filter=${b64([prop('info.pretty_name', 'contains', 'debian')])}`,
    );
    expect(names(byName.body)).to.deep.equal(['web-1']);
    // Another namespace's operating system finds nothing here.
    const fedora = await api(
      'GET',
      `/api/devices?status=pending&filter=${b64([prop('info.id', 'eq', 'fedora')])}`,
    );
    expect(fedora.body).to.deep.equal([]);
    for (const bad of [
      prop('info.id', 'gt', 3),
      prop('info.id', 'eq', { a: 1 }),
      prop('online', 'contains', 'x'),
    ]) {
      const res = await api('GET', `/api/devices?filter=${b64([bad])}`);
      expect(res.status, JSON.stringify(bad)).to.equal(400);
      expect(res.body.fields ?? res.body).to.satisfy((f: unknown) => JSON.stringify(f).includes('filter'));
    }
  });

  it('filters on online as the API shows it: none of these devices has a tunnel', async () => {
    const online = await api('GET', `/api/devices?filter=${b64([prop('online', 'bool', true)])}`);
    expect(online.status).to.equal(200);
    expect(online.body).to.deep.equal([]);
    const offline = await api('GET', `/api/devices?filter=${b64([prop('online', 'eq', 'false')])}`);
    expect(names(offline.body)).to.deep.equal(['db-1', 'web-1']);
  });

  it('searches name, tag and address with or, and narrows the search with and', async () => {
    const search = (term: string): unknown[] => [
      prop('name', 'contains', term),
      { type: 'operator', params: { name: 'or' } },
      prop('tags', 'contains', term),
      { type: 'operator', params: { name: 'or' } },
      prop('remote_addr', 'contains', term),
    ];
    expect(names((await api('GET', `/api/devices?filter=${b64(search('web'))}`)).body)).to.deep.equal([
      'web-1',
    ]);
    expect(names((await api('GET', `/api/devices?filter=${b64(search('production'))}`)).body)).to.deep.equal([
      'db-1',
    ]);
    // Every registration here comes from the loopback address.
    expect(names((await api('GET', `/api/devices?filter=${b64(search('127.0.0'))}`)).body)).to.deep.equal([
      'db-1',
      'web-1',
    ]);
    const narrowed = [
      ...search('127.0.0'),
      { type: 'operator', params: { name: 'and' } },
      prop('info.id', 'eq', 'debian'),
    ];
    const res = await api('GET', `/api/devices?filter=${b64(narrowed)}`);
    expect(names(res.body)).to.deep.equal(['web-1']);
    expect(res.headers.get('x-total-count')).to.equal('1');
  });
});
