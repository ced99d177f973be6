import { expect } from 'chai';
import type { Knex } from 'knex';
import { type LoginAnswer, startServer, type TestServer } from '../../support/server';
import { otherNamespace, registerDevice } from '../../support/tenants';

/**
 * What the sessions calls answer about each session's device (`device`) and what
 * `GET /api/stats` counts as active sessions, without an agent: devices register through the agent's own call and
 * sessions are opened through the service the gateway uses.
 */
describe('sessions: the device in each answer, and active sessions in the stats', function () {
  this.timeout(60_000);
  let server: TestServer;
  let me: LoginAnswer;
  let other: LoginAnswer;
  let db: Knex;
  let mac = 0;

  const api = (method: string, path: string, body?: unknown, token = me.token) =>
    server.api(method, path, { token, ...(body === undefined ? {} : { body }) });

  /** Registers a new device, or again the device of an earlier call when `n` names it. */
  const register = async (tenant: string, opts: { platform?: 'native' | 'docker'; n?: number } = {}) => {
    const n = opts.n ?? ++mac;
    const device = await registerDevice(server, {
      tenant,
      hostname: `host-${n}`,
      mac: `02:00:00:00:20:${n.toString(16).padStart(2, '0')}`,
      keyLabel: `session-key-${n}`,
      ...(opts.platform ? { platform: opts.platform } : {}),
    });
    return device.uid;
  };

  const open = (tenantId: string, deviceUid: string) =>
    server.kernel.container.cradle.sessions.open({
      tenantId,
      deviceUid,
      username: 'root',
      ip: '192.0.2.7',
      type: 'term',
      recorded: false,
    });

  /** Counts the SQL statements the server runs while `fn` runs, in all and those that read the devices table. */
  const countQueries = async (fn: () => Promise<unknown>) => {
    const seen = { all: 0, devices: 0 };
    const onQuery = (q: { sql: string }) => {
      seen.all += 1;
      if (/\bfrom "devices"/.test(q.sql)) seen.devices += 1;
    };
    db.on('query', onQuery);
    try {
      await fn();
    } finally {
      db.removeListener('query', onQuery);
    }
    return seen;
  };

  before(async () => {
    // Every registration here comes from 127.0.0.1: lift the per-source limits on new devices (tested in security).
    server = await startServer({
      ssh: false,
      overrides: { limits: { registrationsPerMinute: 1000, pendingPerSource: 1000, pendingPerBlock: 1000 } },
    });
    me = await server.setup();
    db = server.kernel.container.cradle.db;
    other = await otherNamespace(server, me);
  });
  after(async () => server?.stop());

  // Each test reads its own namespace's sessions from a clean slate.
  afterEach(async () => {
    await db('sessions').delete();
  });

  it('carries the device exactly as the devices API answers it, in the list and by uid', async () => {
    const uid = await register(me.tenant);
    expect((await api('PATCH', `/api/devices/${uid}/accept`)).status).to.equal(200);
    expect((await api('POST', `/api/devices/${uid}/tags`, { tag: 'prod' })).status).to.equal(200);
    // An agent inside a container is a device too.
    const inDocker = await register(me.tenant, { platform: 'docker' });
    const s1 = await open(me.tenant, uid);
    const s2 = await open(me.tenant, inDocker);

    const device = (await api('GET', `/api/devices/${uid}`)).body;
    const dockerDevice = (await api('GET', `/api/devices/${inDocker}`)).body;
    expect(device).to.include({ uid, status: 'accepted' });
    expect(dockerDevice).to.include({ uid: inDocker, status: 'pending' });

    const one = await api('GET', `/api/sessions/${s1}`);
    expect(one.status).to.equal(200);
    expect(one.body.device_uid).to.equal(uid);
    expect(one.body.device).to.deep.equal(device);

    const list = await api('GET', '/api/sessions');
    expect(list.status).to.equal(200);
    const byUid = new Map((list.body as { uid: string; device: unknown }[]).map((s) => [s.uid, s.device]));
    expect(byUid.get(s1)).to.deep.equal(device);
    expect(byUid.get(s2)).to.deep.equal(dockerDevice);
  });

  it('answers device null once the device is deleted, removed or gone, never a 500', async () => {
    const removed = await register(me.tenant);
    const removedN = mac;
    const gone = await register(me.tenant);
    const kept = await register(me.tenant);
    const sRemoved = await open(me.tenant, removed);
    const sGone = await open(me.tenant, gone);
    const sKept = await open(me.tenant, kept);
    const sNever = await open(me.tenant, 'f'.repeat(64));

    expect((await api('DELETE', `/api/devices/${removed}`)).status).to.equal(200);
    // No call deletes a device row outright today; a store clean-up (or a future purge) may.
    await db('devices').where({ uid: gone }).delete();

    for (const s of [sRemoved, sGone, sNever]) {
      const res = await api('GET', `/api/sessions/${s}`);
      expect(res.status, s).to.equal(200);
      expect(res.body.device, s).to.equal(null);
    }
    const list = await api('GET', '/api/sessions?per_page=100');
    expect(list.status).to.equal(200);
    const byUid = new Map(
      (list.body as { uid: string; device: { uid: string } | null }[]).map((s) => [s.uid, s]),
    );
    expect(byUid.get(sRemoved)?.device).to.equal(null);
    expect(byUid.get(sGone)?.device).to.equal(null);
    expect(byUid.get(sNever)?.device).to.equal(null);
    expect(byUid.get(sKept)?.device?.uid).to.equal(kept);

    // A removed device whose agent registers again is back (pending), and so is its place in the session.
    expect(await register(me.tenant, { n: removedN })).to.equal(removed);
    expect((await api('GET', `/api/sessions/${sRemoved}`)).body.device).to.include({
      uid: removed,
      status: 'pending',
    });
  });

  it("never shows another namespace's device, even under a session that names its uid", async () => {
    const theirs = await register(other.tenant);
    const s = await open(me.tenant, theirs);
    expect((await api('GET', `/api/sessions/${s}`)).body.device).to.equal(null);
    expect((await api('GET', '/api/sessions')).body[0].device).to.equal(null);
  });

  it('looks the devices of a page up in a fixed number of queries, however many sessions it holds', async () => {
    const first = await register(me.tenant);
    await open(me.tenant, first);
    const few = await countQueries(async () => {
      const res = await api('GET', '/api/sessions?per_page=20');
      expect(res.body).to.have.length(1);
      expect(res.body[0].device.uid).to.equal(first);
    });

    for (let i = 0; i < 11; i++) await open(me.tenant, await register(me.tenant));
    const many = await countQueries(async () => {
      const res = await api('GET', '/api/sessions?per_page=20');
      expect(res.body).to.have.length(12);
      for (const s of res.body as { device_uid: string; device: { uid: string } }[])
        expect(s.device.uid).to.equal(s.device_uid);
    });
    expect(many.devices, 'device queries for 12 sessions').to.equal(few.devices);
    expect(many.all, 'queries for 12 sessions').to.equal(few.all);
    expect(few.devices).to.be.at.most(2);
  });

  it('counts active sessions in GET /api/stats: open ones of this namespace, not closed or unvouched ones', async () => {
    const statsOf = async (token: string) => {
      const res = await api('GET', '/api/stats', undefined, token);
      expect(res.status).to.equal(200);
      return res.body.active_sessions as number;
    };
    expect(await statsOf(me.token)).to.equal(0);

    const device = await register(me.tenant);
    const live = await open(me.tenant, device);
    const closed = await open(me.tenant, device);
    const stale = await open(me.tenant, device);
    await open(other.tenant, await register(other.tenant));
    expect(await statsOf(me.token)).to.equal(3);
    expect(await statsOf(other.token)).to.equal(1);

    expect((await api('POST', `/api/sessions/${closed}/close`, {})).status).to.equal(200);
    // A gateway that died stops vouching for its sessions: six minutes without a heartbeat is past the window.
    await db('sessions')
      .where({ uid: stale })
      .update({ last_seen: db.raw("now() - interval '6 minutes'") });
    expect(await statsOf(me.token)).to.equal(1);

    const states = new Map(
      ((await api('GET', '/api/sessions')).body as { uid: string; active: boolean }[]).map((s) => [
        s.uid,
        s.active,
      ]),
    );
    expect(Object.fromEntries(states)).to.deep.equal({ [live]: true, [closed]: false, [stale]: false });
    expect((await api('GET', `/api/sessions/${stale}`)).body.active).to.equal(false);

    // The heartbeat vouching again brings it back.
    await server.kernel.container.cradle.sessions.touch([stale]);
    expect(await statsOf(me.token)).to.equal(2);
  });

  it('filters the list by user, device, active and start time, within the namespace, and refuses bad filters', async () => {
    const web = await register(me.tenant);
    const db1 = await register(me.tenant);
    const asRoot = await open(me.tenant, web);
    const asDeploy = await server.kernel.container.cradle.sessions.open({
      tenantId: me.tenant,
      deviceUid: db1,
      username: 'deploy',
      ip: '192.0.2.8',
      type: 'term',
      recorded: false,
    });
    const ended = await open(me.tenant, db1);
    expect((await api('POST', `/api/sessions/${ended}/close`, {})).status).to.equal(200);
    await db('sessions')
      .where({ uid: ended })
      .update({ started_at: new Date('2020-01-02T03:04:05Z') });
    // Another namespace's session on a device uid and user this one filters on is never listed.
    await open(other.tenant, web);

    const uids = async (query: string) => {
      const res = await api('GET', `/api/sessions?per_page=100&${query}`);
      expect(res.status, `${query}: ${JSON.stringify(res.body)}`).to.equal(200);
      expect(Number(res.headers.get('x-total-count')), query).to.equal(res.body.length);
      return (res.body as { uid: string }[]).map((s) => s.uid).sort();
    };
    const sorted = (...xs: string[]) => [...xs].sort();
    expect(await uids('')).to.deep.equal(sorted(asRoot, asDeploy, ended));
    expect(await uids('username=deploy')).to.deep.equal([asDeploy]);
    expect(await uids('username=root')).to.deep.equal(sorted(asRoot, ended));
    expect(await uids('username=nobody')).to.deep.equal([]);
    expect(await uids(`device_uid=${db1}`)).to.deep.equal(sorted(asDeploy, ended));
    expect(await uids(`device_uid=${web}`)).to.deep.equal([asRoot]);
    expect(await uids('active=true')).to.deep.equal(sorted(asRoot, asDeploy));
    expect(await uids('active=false')).to.deep.equal([ended]);
    expect(await uids('started_before=2021-01-01T00:00:00Z')).to.deep.equal([ended]);
    expect(await uids('started_after=2021-01-01T00:00:00Z')).to.deep.equal(sorted(asRoot, asDeploy));
    expect(
      await uids('started_after=2020-01-02T03:04:05Z&started_before=2020-01-02T03:04:06Z&username=root'),
    ).to.deep.equal([ended]);
    expect(await uids(`active=true&device_uid=${db1}&username=root`)).to.deep.equal([]);

    for (const [query, field] of [
      ['active=maybe', 'active'],
      ['device_uid=not-a-uid', 'device_uid'],
      ['username=', 'username'],
      [`username=${'x'.repeat(300)}`, 'username'],
      ['started_after=yesterday', 'started_after'],
      ['started_before=2020-13-45T99:00:00Z', 'started_before'],
      ['started_after=2022-01-01T00:00:00Z&started_before=2021-01-01T00:00:00Z', 'started_after'],
    ]) {
      const res = await api('GET', `/api/sessions?${query}`);
      expect(res.status, query).to.equal(400);
      expect(JSON.stringify(res.body), query).to.contain(field);
    }
  });
});
