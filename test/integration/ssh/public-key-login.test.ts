import { expect } from 'chai';
import type { Knex } from 'knex';
import { GatewayWorld } from './gateway-world';

describe('ssh through the gateway: public-key sign-in and its filters', function () {
  this.timeout(90_000);
  let world: GatewayWorld;
  before(async () => {
    world = await GatewayWorld.start({ deviceName: 'keyed-device' });
    const tags = await world.api('PUT', `/api/devices/${world.deviceUid}/tags`, {
      tags: ['prod'],
    });
    expect(tags.status).to.equal(200);
  });
  after(async () => {
    await world?.stop();
  });

  const register = async (name: string, username: string, filter: unknown) => {
    const key = world.newKey(name);
    const res = await world.api('POST', '/api/sshkeys/public-keys', {
      name,
      data: key.data,
      username,
      filter,
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return key;
  };

  it('signs in with a registered key (the server vouches to the agent for the key it checked)', async () => {
    const key = await register('any-host', '.*', { hostname: '.*' });
    const res = await world.sshKey(key.file, ['echo', 'signed-in-by-key']);
    expect(res.stderr).to.not.match(/denied/i);
    expect(res.code).to.equal(0);
    expect(res.stdout.toString()).to.equal('signed-in-by-key\n');
  });

  it('refuses a key that is not registered', async () => {
    const stranger = world.newKey('stranger');
    const res = await world.sshKey(stranger.file, ['true']);
    expect(res.code).to.equal(255);
    expect(res.stderr).to.match(/Permission denied \(publickey,password\)/);
  });

  it('applies the username expression', async () => {
    const key = await register('root-only', '^root$', { hostname: '.*' });
    expect((await world.sshKey(key.file, ['true'], world.target('root'))).code).to.equal(0);
    const other = await world.sshKey(key.file, ['true'], world.target('operator'));
    expect(other.code).to.equal(255);
    expect(other.stderr).to.match(/Permission denied/);
  });

  it('applies the hostname expression on the device name', async () => {
    const match = await register('keyed-hosts', '.*', { hostname: '^keyed-' });
    expect((await world.sshKey(match.file, ['true'])).code).to.equal(0);
    const miss = await register('other-hosts', '.*', { hostname: '^other-' });
    const res = await world.sshKey(miss.file, ['true']);
    expect(res.code).to.equal(255);
    expect(res.stderr).to.match(/Permission denied/);
  });

  it('applies the tags filter on the device tags', async () => {
    const prod = await register('prod-key', '.*', { tags: ['prod'] });
    expect((await world.sshKey(prod.file, ['true'])).code).to.equal(0);
    const staging = await register('staging-key', '.*', { tags: ['staging'] });
    expect((await world.sshKey(staging.file, ['true'])).code).to.equal(255);
    // Tagging the key with the device's tag lets it in.
    const fp = (await world.api('GET', '/api/sshkeys/public-keys?per_page=100')).body.find(
      (k: { name: string }) => k.name === 'staging-key',
    ).fingerprint;
    expect((await world.api('POST', `/api/sshkeys/public-keys/${fp}/tags`, { tag: 'prod' })).status).to.equal(
      200,
    );
    expect((await world.sshKey(staging.file, ['true'])).code).to.equal(0);
  });

  it('records key sign-ins as authenticated sessions with the key fingerprint', async () => {
    const list = await world.api('GET', '/api/sessions?per_page=100');
    const signedIn = list.body.filter((s: { authenticated: boolean }) => s.authenticated);
    expect(signedIn.length).to.be.greaterThan(0);
    const events = signedIn.flatMap(
      (s: { events: { items: { type: string; data?: { method?: string } }[] } }) =>
        s.events.items.filter((e) => e.type === 'authenticated'),
    );
    expect(events.some((e: { data?: { method?: string } }) => e.data?.method === 'publickey')).to.equal(true);
  });

  it('reads the namespace and the key once each per key sign-in: the signed attempt reuses the answer to the query', async () => {
    const key = await register('counted', '.*', { hostname: '.*' });
    const db = world.server.kernel.container.cradle.db as Knex;
    const reads = { namespaces: 0, keys: 0 };
    const onQuery = (q: { sql: string }) => {
      if (/\bfrom "namespaces"/.test(q.sql)) reads.namespaces += 1;
      if (/\bfrom "public_keys"/.test(q.sql)) reads.keys += 1;
    };
    db.on('query', onQuery);
    try {
      const res = await world.sshKey(key.file, ['true']);
      expect(res.code, res.stderr).to.equal(0);
    } finally {
      db.removeListener('query', onQuery);
    }
    // The client asks whether the key would do, then signs with it (RFC 4252 section 7): one look-up for both.
    expect(reads).to.deep.equal({ namespaces: 1, keys: 1 });
  });
});
