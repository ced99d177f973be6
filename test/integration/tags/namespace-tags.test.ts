import { expect } from 'chai';
import ssh2 from 'ssh2';
import { agentAuthRequest } from '../../support/device-keys';
import { type LoginAnswer, startServer, type TestServer } from '../../support/server';

/**
 * The namespace-wide tag calls over everything that carries tags: devices, public-key
 * filters and firewall-rule filters. A rename or delete changes all of them in one transaction or none of them.
 */
describe('tags: namespace-wide list, rename and delete over devices, public keys and firewall rules', function () {
  this.timeout(60_000);
  let server: TestServer;
  let me: LoginAnswer;
  let other: LoginAnswer;
  let admin: LoginAnswer;
  let mac = 0;
  let round = 0;

  const api = (method: string, path: string, body?: unknown, token = me.token) =>
    server.api(method, path, { token, ...(body === undefined ? {} : { body }) });

  const device = async (tenant: string, tags: string[], token: string) => {
    mac += 1;
    const res = await server.api(
      'POST',
      '/api/devices/auth',
      agentAuthRequest({
        tenant,
        hostname: `tagged-${mac}`,
        mac: `02:00:00:00:30:${mac.toString(16).padStart(2, '0')}`,
        keyLabel: `tag-key-${mac}`,
      }),
    );
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const uid = res.body.uid as string;
    if (tags.length)
      expect((await api('PUT', `/api/devices/${uid}/tags`, { tags }, token)).status).to.equal(200);
    return uid;
  };
  const deviceTags = async (uid: string, token = me.token) =>
    (await api('GET', `/api/devices/${uid}`, undefined, token)).body.tags as string[];

  const key = async (filter: unknown, token = me.token) => {
    let pair = ssh2.utils.generateKeyPairSync('ed25519');
    while (ssh2.utils.parseKey(pair.private) instanceof Error)
      pair = ssh2.utils.generateKeyPairSync('ed25519');
    const res = await api(
      'POST',
      '/api/sshkeys/public-keys',
      { data: Buffer.from(pair.public).toString('base64'), name: `key-${mac}`, username: '.*', filter },
      token,
    );
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.fingerprint as string;
  };
  const keyFilter = async (fingerprint: string, token = me.token) => {
    const list = await api('GET', '/api/sshkeys/public-keys?per_page=100', undefined, token);
    return (list.body as { fingerprint: string; filter: unknown }[]).find(
      (k) => k.fingerprint === fingerprint,
    )?.filter;
  };

  const rule = async (filter: unknown, token = me.token) => {
    const res = await api(
      'POST',
      '/api/firewall/rules',
      { action: 'deny', priority: 1, source_ip: '.*', username: '.*', filter },
      token,
    );
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.id as string;
  };
  const ruleOf = async (id: string, token = me.token) =>
    (await api('GET', `/api/firewall/rules/${id}`, undefined, token)).body as {
      filter: unknown;
      active: boolean;
    };

  const tags = async (token = me.token) => {
    const res = await api('GET', '/api/tags', undefined, token);
    expect(res.status).to.equal(200);
    return res.body as string[];
  };

  /** A new namespace of the first user, and a token switched to it. */
  const namespace = async (name: string) => {
    const ns = await server.api('POST', '/api/namespaces', { token: admin.token, body: { name } });
    expect(ns.status, JSON.stringify(ns.body)).to.equal(200);
    const switched = await server.api('GET', `/api/auth/token/${ns.body.tenant_id}`, { token: admin.token });
    expect(switched.status).to.equal(200);
    return switched.body as LoginAnswer;
  };

  before(async () => {
    // Every registration here comes from 127.0.0.1: lift the per-source limits on new devices (tested in security).
    server = await startServer({
      ssh: false,
      overrides: { limits: { registrationsPerMinute: 1000, pendingPerSource: 1000, pendingPerBlock: 1000 } },
    });
    admin = await server.setup();
  });
  after(async () => server?.stop());
  // Each test gets two fresh namespaces: its own and a neighbour whose tags must stay apart.
  beforeEach(async () => {
    round += 1;
    me = await namespace(`tags-${round}`);
    other = await namespace(`next-${round}`);
  });

  it('lists the tags of devices, public-key filters and firewall-rule filters, once each, sorted', async () => {
    await device(me.tenant, ['prod', 'web'], me.token);
    await key({ tags: ['prod', 'bastion'] });
    await key({ hostname: '^db-' });
    await rule({ tags: ['quarantine'] });
    await rule({ hostname: '.*' });
    await key({ tags: ['theirs'] }, other.token);
    expect(await tags()).to.deep.equal(['bastion', 'prod', 'quarantine', 'web']);
    expect(await tags(other.token)).to.deep.equal(['theirs']);
  });

  it('renames a tag on devices, keys and rules alike, and only in the caller namespace', async () => {
    const d = await device(me.tenant, ['prod', 'web'], me.token);
    const k = await key({ tags: ['web', 'prod'] });
    const r = await rule({ tags: ['prod'] });
    const hostKey = await key({ hostname: 'prod' });
    const theirKey = await key({ tags: ['prod'] }, other.token);
    const theirDevice = await device(other.tenant, ['prod'], other.token);

    const res = await api('PUT', '/api/tags/prod', { tag: 'production' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(await deviceTags(d)).to.deep.equal(['production', 'web']);
    // The tag keeps its place in the filter.
    expect(await keyFilter(k)).to.deep.equal({ tags: ['web', 'production'] });
    expect((await ruleOf(r)).filter).to.deep.equal({ tags: ['production'] });
    // A hostname expression is not a tag, even when it spells one.
    expect(await keyFilter(hostKey)).to.deep.equal({ hostname: 'prod' });
    expect(await tags()).to.deep.equal(['production', 'web']);

    expect(await keyFilter(theirKey, other.token)).to.deep.equal({ tags: ['prod'] });
    expect(await deviceTags(theirDevice, other.token)).to.deep.equal(['prod']);
    expect(await tags(other.token)).to.deep.equal(['prod']);
  });

  it('renames a tag that only a key or a rule carries, and refuses a name used anywhere in the namespace', async () => {
    const d = await device(me.tenant, ['web'], me.token);
    const k = await key({ tags: ['bastion'] });
    const r = await rule({ tags: ['quarantine'] });

    expect((await api('PUT', '/api/tags/bastion', { tag: 'jump-host' })).status).to.equal(200);
    expect(await keyFilter(k)).to.deep.equal({ tags: ['jump-host'] });

    // 409 when the new name is a device's, a key's or a rule's tag, and nothing changes.
    for (const taken of ['web', 'jump-host', 'quarantine']) {
      const from = taken === 'quarantine' ? 'web' : 'quarantine';
      const res = await api('PUT', `/api/tags/${from}`, { tag: taken });
      expect(res.status, `${from} -> ${taken}`).to.equal(409);
      expect(res.body).to.deep.equal(['tag']);
    }
    expect(await deviceTags(d)).to.deep.equal(['web']);
    expect((await ruleOf(r)).filter).to.deep.equal({ tags: ['quarantine'] });
    expect(await tags()).to.deep.equal(['jump-host', 'quarantine', 'web']);

    expect((await api('PUT', '/api/tags/nothing', { tag: 'something' })).status).to.equal(404);
    expect((await api('PUT', '/api/tags/theirs', { tag: 'mine' })).status).to.equal(404);
    expect((await api('PUT', '/api/tags/web', { tag: 'x' })).status).to.equal(400);
    expect((await api('PUT', '/api/tags/web', {})).status).to.equal(400);
  });

  it('deletes a tag from devices, keys and rules that keep another tag', async () => {
    const d = await device(me.tenant, ['prod', 'web'], me.token);
    const k = await key({ tags: ['prod', 'bastion'] });
    const r = await rule({ tags: ['web', 'prod', 'eur'] });

    const res = await api('DELETE', '/api/tags/prod');
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(await deviceTags(d)).to.deep.equal(['web']);
    expect(await keyFilter(k)).to.deep.equal({ tags: ['bastion'] });
    expect((await ruleOf(r)).filter).to.deep.equal({ tags: ['web', 'eur'] });
    expect(await tags()).to.deep.equal(['bastion', 'eur', 'web']);
    expect((await api('DELETE', '/api/tags/prod')).status).to.equal(404);
  });

  it('refuses with 406, changing nothing, a delete that would leave a key or rule filter without tags', async () => {
    const d = await device(me.tenant, ['prod', 'web'], me.token);
    const shared = await key({ tags: ['prod', 'web'] });
    const only = await key({ tags: ['prod'] });
    const r = await rule({ tags: ['prod'] });

    const res = await api('DELETE', '/api/tags/prod');
    expect(res.status).to.equal(406);
    // The answer names every filter in the way, so one look tells the user what to change.
    expect(res.body.message).to.include('public key').and.to.include('firewall rule').and.to.include(r);
    // All or nothing: the device and the key that had another tag are untouched too.
    expect(await deviceTags(d)).to.deep.equal(['prod', 'web']);
    expect(await keyFilter(shared)).to.deep.equal({ tags: ['prod', 'web'] });
    expect(await keyFilter(only)).to.deep.equal({ tags: ['prod'] });
    expect(await ruleOf(r)).to.deep.include({ filter: { tags: ['prod'] }, active: true });
    expect(await tags()).to.deep.equal(['prod', 'web']);

    // Once those filters have another tag, the delete goes through.
    expect((await api('POST', `/api/sshkeys/public-keys/${only}/tags`, { tag: 'web' })).status).to.equal(200);
    expect((await api('PUT', `/api/firewall/rules/${r}`, { filter: { hostname: '^db-' } })).status).to.equal(
      200,
    );
    expect((await api('DELETE', '/api/tags/prod')).status).to.equal(200);
    expect(await keyFilter(only)).to.deep.equal({ tags: ['web'] });
    expect(await deviceTags(d)).to.deep.equal(['web']);
  });

  it('serialises renames in one namespace: two renames to one name give one 200 and one 409', async () => {
    const k = await key({ tags: ['alpha', 'gamma'] });
    const d = await device(me.tenant, ['alpha', 'gamma'], me.token);
    // On PostgreSQL, the first rename holds its transaction open until the second has begun its own, so the two
    // really overlap. The embedded store has one connection: there the second cannot begin before the first ends.
    const db = server.kernel.container.cradle.db;
    let begun = 0;
    const onQuery = (q: { sql: string }) => {
      if (/^begin/i.test(q.sql.trim())) begun += 1;
    };
    let hold = server.databaseUrl !== undefined;
    db.on('query', onQuery);
    server.kernel.hooks.on('tags.renamed', async () => {
      if (!hold) return;
      hold = false;
      const until = Date.now() + 5_000;
      while (begun < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
      expect(begun, 'the second rename began while the first was open').to.be.at.least(2);
      // Room for the second to go as far as it can before the first commits.
      await new Promise((r) => setTimeout(r, 200));
    });
    try {
      const answers = await Promise.all([
        api('PUT', '/api/tags/alpha', { tag: 'beta' }),
        api('PUT', '/api/tags/gamma', { tag: 'beta' }),
      ]);
      expect(answers.map((a) => a.status).sort()).to.deep.equal([200, 409]);
    } finally {
      hold = false;
      db.removeListener('query', onQuery);
    }
    for (const tags of [((await keyFilter(k)) as { tags: string[] }).tags, await deviceTags(d)]) {
      expect(tags).to.have.length(2);
      expect(tags.filter((t) => t === 'beta')).to.have.length(1);
    }
  });

  it('lets an observer key list the tags but not rename or delete them', async () => {
    await key({ tags: ['bastion'] });
    const created = await api('POST', '/api/namespaces/api-key', {
      name: 'watcher',
      role: 'observer',
      expires_in: -1,
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(200);
    const apiKey = created.body.id as string;
    expect((await server.api('GET', '/api/tags', { apiKey })).body).to.deep.equal(['bastion']);
    expect(
      (await server.api('PUT', '/api/tags/bastion', { apiKey, body: { tag: 'other' } })).status,
    ).to.equal(403);
    expect((await server.api('DELETE', '/api/tags/bastion', { apiKey })).status).to.equal(403);
    expect(await tags()).to.deep.equal(['bastion']);
  });
});
