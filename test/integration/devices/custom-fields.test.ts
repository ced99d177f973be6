import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import Ajv from 'ajv';
import { expect } from 'chai';
import { type LoginAnswer, startServer, type TestServer } from '../../support/server';
import { addMember, otherNamespace, registerDevice } from '../../support/tenants';

/** ShellHub 0.20's description of the two calls and of a device's custom_fields (test/fixtures/shellhub-0.20). */
const shellhub = JSON.parse(
  readFileSync(new URL('../../fixtures/shellhub-0.20/custom-fields.json', import.meta.url), 'utf8'),
) as {
  put: { requestBody: object; responses: string[] };
  delete: { responses: string[] };
  device: { custom_fields: object };
};
const ajv = new Ajv({ strict: false });
const shellhubBody = ajv.compile(shellhub.put.requestBody);
const shellhubFields = ajv.compile(shellhub.device.custom_fields);

/**
 * Custom device fields: `PUT` and `DELETE /api/devices/{uid}/custom_fields/{key}` as ShellHub 0.20 has them, shown on
 * the device, and the list filtered and sorted by them, each in the caller's namespace only.
 */
describe('devices: custom fields', function () {
  this.timeout(30_000);
  let server: TestServer;
  let me: LoginAnswer;
  let other: LoginAnswer;
  let observer: LoginAnswer;
  const uids: Record<string, string> = {};

  const api = (method: string, path: string, body?: unknown, token = me.token) =>
    server.api(method, path, { token, body });
  const field = (uid: string, key: string) => `/api/devices/${uid}/custom_fields/${encodeURIComponent(key)}`;
  const set = async (uid: string, key: string, value: string, token = me.token) => {
    expect(shellhubBody({ value }), 'a body ShellHub accepts').to.equal(true);
    return api('PUT', field(uid, key), { value }, token);
  };
  const b64 = (v: unknown) => encodeURIComponent(Buffer.from(JSON.stringify(v)).toString('base64'));
  const prop = (name: string, operator: string, value: unknown) => ({
    type: 'property',
    params: { name, operator, value },
  });
  const fieldsOf = async (uid: string) => {
    const res = await api('GET', `/api/devices/${uid}`);
    expect(res.status).to.equal(200);
    expect(shellhubFields(res.body.custom_fields), JSON.stringify(shellhubFields.errors)).to.equal(true);
    return res.body.custom_fields as Record<string, string>;
  };

  before(async () => {
    server = await startServer({ ssh: false });
    me = await server.setup();
    observer = await addMember(server, me, 'fields-observer', 'observer');
    other = await otherNamespace(server, me);
    for (const [n, name] of ['web-1', 'web-2', 'db-1'].entries()) {
      const d = await registerDevice(server, {
        tenant: me.tenant,
        hostname: name,
        mac: `02:00:00:00:31:0${n}`,
        keyLabel: `fields-${n}`,
      });
      expect((await api('PATCH', `/api/devices/${d.uid}/accept`)).status).to.equal(200);
      uids[name] = d.uid;
    }
    uids.elsewhere = (
      await registerDevice(server, {
        tenant: other.tenant,
        hostname: 'elsewhere',
        mac: '02:00:00:00:31:09',
        keyLabel: 'fields-other',
      })
    ).uid;
  });
  after(async () => server?.stop());

  it('starts empty, sets, changes and removes one field, idempotently', async () => {
    const web = uids['web-1'] as string;
    expect(await fieldsOf(web)).to.deep.equal({});
    const first = await set(web, 'owner', 'team-a');
    expect(first.status).to.equal(200);
    expect(shellhub.put.responses).to.include(String(first.status));
    expect((await set(web, 'owner', 'team-a')).status).to.equal(200);
    expect((await set(web, 'asset.number', 'A-0042')).status).to.equal(200);
    expect(await fieldsOf(web)).to.deep.equal({ owner: 'team-a', 'asset.number': 'A-0042' });
    expect((await set(web, 'owner', 'team-b')).status).to.equal(200);
    expect((await fieldsOf(web)).owner).to.equal('team-b');

    const removed = await api('DELETE', field(web, 'asset.number'));
    expect(removed.status).to.equal(200);
    expect(shellhub.delete.responses).to.include(String(removed.status));
    expect((await api('DELETE', field(web, 'asset.number'))).status, 'a missing key is no error').to.equal(
      200,
    );
    expect(await fieldsOf(web)).to.deep.equal({ owner: 'team-b' });
    // The list shows them too.
    const listed = await api('GET', '/api/devices?sort_by=name&order_by=asc');
    expect(listed.body.map((d: { custom_fields: object }) => d.custom_fields)).to.deep.equal([
      {},
      { owner: 'team-b' },
      {},
    ]);
  });

  it('refuses keys and values outside the rules with 400, and a device it cannot see with 404', async () => {
    const web = uids['web-2'] as string;
    expect((await set(web, 'x'.repeat(65), 'v')).status).to.equal(400);
    expect((await api('PUT', field(web, 'has space'), { value: 'v' })).status).to.equal(400);
    expect((await api('PUT', field(web, "o'wner"), { value: 'v' })).status).to.equal(400);
    // A browser, and fetch, fold `.` and `..` (and `%2E`) into the path around them: `..` would name the device
    // itself, so neither is a key. Sent as written, by a client that does not fold them, they are refused here.
    const asWritten = (method: string, key: string) =>
      new Promise<number>((resolve, reject) => {
        const body = method === 'PUT' ? JSON.stringify({ value: 'v' }) : '';
        const at = new URL(server.url);
        // Options, not a URL: a URL would be folded on the way.
        const req = request(
          {
            hostname: at.hostname,
            port: at.port,
            path: `/api/devices/${web}/custom_fields/${key}`,
            method,
            headers: { authorization: `Bearer ${me.token}`, 'content-type': 'application/json' },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    for (const key of ['%2E', '%2E%2E', '%2e%2E'])
      for (const method of ['PUT', 'DELETE'])
        expect(await asWritten(method, key), `${method} ${key}`).to.equal(400);
    expect((await set(web, '...', 'dots')).status, 'three dots are a plain key').to.equal(200);
    expect((await api('DELETE', field(web, '...'))).status).to.equal(200);
    expect((await api('GET', `/api/devices/${web}`)).body.status, 'the device is still there').to.equal(
      'accepted',
    );
    const long = await api('PUT', field(web, 'owner'), { value: 'v'.repeat(257) });
    expect(long.status).to.equal(400);
    expect((await api('PUT', field(web, 'owner'), { value: 42 })).status).to.equal(400);
    expect((await api('PUT', field(web, 'owner'), { value: 'v', extra: 1 })).status).to.equal(400);
    expect((await api('PUT', field(web, 'owner'), {})).status).to.equal(400);
    // Text the store cannot hold: a NUL, half a surrogate pair.
    for (const value of ['a\u0000b', 'a\ud800b'])
      expect((await api('PUT', field(web, 'owner'), { value })).status, JSON.stringify(value)).to.equal(400);
    expect((await set(web, 'owner', 'v'.repeat(256))).status, 'exactly the limit').to.equal(200);
    const missing = '0'.repeat(64);
    expect((await set(missing, 'owner', 'v')).status).to.equal(404);
    expect((await api('DELETE', field(missing, 'owner'))).status).to.equal(404);
    expect(await fieldsOf(web)).to.deep.equal({ owner: 'v'.repeat(256) });
    // Keys that name object internals in JavaScript are plain keys here, stored and answered as such.
    for (const key of ['__proto__', 'constructor'])
      expect((await set(web, key, 'plain')).status).to.equal(200);
    const raw = await server.api('GET', `/api/devices/${web}`, { token: me.token });
    expect(Object.keys(raw.body.custom_fields).sort()).to.deep.equal(['__proto__', 'constructor', 'owner']);
    expect(Object.getPrototypeOf(raw.body.custom_fields)).to.equal(Object.prototype);
    for (const key of ['__proto__', 'constructor'])
      expect((await api('DELETE', field(web, key))).status).to.equal(200);
  });

  it('holds at most 32 keys per device: a 33rd is 400 ["key"], changing one of the 32 still works', async () => {
    const db = uids['db-1'] as string;
    const sets = await Promise.all(Array.from({ length: 40 }, (_, i) => set(db, `k${i}`, `v${i}`)));
    expect(sets.filter((r) => r.status === 200)).to.have.length(32);
    const refused = sets.filter((r) => r.status !== 200);
    expect(refused.map((r) => r.status)).to.deep.equal(Array(8).fill(400));
    expect(refused[0]?.body).to.deep.equal(['key']);
    const held = await fieldsOf(db);
    expect(Object.keys(held)).to.have.length(32);
    const kept = Object.keys(held)[0] as string;
    expect((await set(db, kept, 'changed')).status).to.equal(200);
    expect((await fieldsOf(db))[kept]).to.equal('changed');
    for (const key of Object.keys(held)) expect((await api('DELETE', field(db, key))).status).to.equal(200);
    expect(await fieldsOf(db)).to.deep.equal({});
  });

  it('filters the list on a field (eq, contains) and sorts by it, devices without it first ascending', async () => {
    await set(uids['web-1'] as string, 'location', 'Berlin rack 2');
    await set(uids['web-2'] as string, 'location', 'Lisbon rack 1');
    const eq = await api(
      'GET',
      `/api/devices?filter=${b64([prop('custom_fields.location', 'eq', 'Lisbon rack 1')])}`,
    );
    expect(eq.status).to.equal(200);
    expect(eq.body.map((d: { name: string }) => d.name)).to.deep.equal(['web-2']);
    expect(eq.headers.get('x-total-count')).to.equal('1');
    const contains = await api(
      'GET',
      `/api/devices?filter=${b64([prop('custom_fields.location', 'contains', 'RACK')])}&sort_by=name&order_by=asc`,
    );
    expect(contains.body.map((d: { name: string }) => d.name)).to.deep.equal(['web-1', 'web-2']);
    const names = async (order: string) =>
      (await api('GET', `/api/devices?sort_by=custom_fields.location&order_by=${order}`)).body.map(
        (d: { name: string }) => d.name,
      );
    expect(await names('asc')).to.deep.equal(['db-1', 'web-1', 'web-2']);
    expect(await names('desc')).to.deep.equal(['web-2', 'web-1', 'db-1']);
    // A key no device has matches none; names that are not custom fields are refused.
    const none = await api('GET', `/api/devices?filter=${b64([prop('custom_fields.nothing', 'eq', 'x')])}`);
    expect(none.body).to.deep.equal([]);
    for (const bad of ["custom_fields.o'wner", 'custom_fields.', 'custom_fields.a b'])
      expect((await api('GET', `/api/devices?filter=${b64([prop(bad, 'eq', 'x')])}`)).status, bad).to.equal(
        400,
      );
    expect(
      (await api('GET', `/api/devices?sort_by=${encodeURIComponent("custom_fields.o'wner")}`)).status,
    ).to.equal(400);
    expect(
      (await api('GET', `/api/devices?filter=${b64([prop('custom_fields.location', 'gt', 'x')])}`)).status,
    ).to.equal(400);
  });

  it('lists the keys in use with counts, most held first, of this namespace and status only', async () => {
    await set(uids['web-1'] as string, 'rack', 'r1');
    const keys = await api('GET', '/api/devices/custom_fields');
    expect(keys.status).to.equal(200);
    expect(keys.body).to.deep.equal([
      { key: 'location', count: 2 },
      { key: 'owner', count: 2 },
      { key: 'rack', count: 1 },
    ]);
    expect((await api('GET', '/api/devices/custom_fields?status=pending')).body).to.deep.equal([]);
    expect((await api('GET', '/api/devices/custom_fields', undefined, other.token)).body).to.deep.equal([]);
    expect((await api('GET', '/api/devices/custom_fields', undefined, observer.token)).status).to.equal(200);
    expect((await api('GET', '/api/containers/custom_fields')).body).to.deep.equal([]);
    expect((await api('DELETE', field(uids['web-1'] as string, 'rack'))).status).to.equal(200);
  });

  it('keeps to the caller namespace and role: another namespace gets 404, an observer 403', async () => {
    const web = uids['web-1'] as string;
    expect((await set(web, 'owner', 'intruder', other.token)).status).to.equal(404);
    expect((await api('DELETE', field(web, 'owner'), undefined, other.token)).status).to.equal(404);
    expect((await set(uids.elsewhere as string, 'owner', 'intruder')).status).to.equal(404);
    expect((await set(web, 'owner', 'observer', observer.token)).status).to.equal(403);
    expect((await api('DELETE', field(web, 'owner'), undefined, observer.token)).status).to.equal(403);
    expect((await fieldsOf(web)).owner).to.equal('team-b');
    // Another namespace's filter on the same key finds none of these devices.
    const theirs = await api(
      'GET',
      `/api/devices?filter=${b64([prop('custom_fields.owner', 'eq', 'team-b')])}&status=pending`,
      undefined,
      other.token,
    );
    expect(theirs.body).to.deep.equal([]);
  });
});
