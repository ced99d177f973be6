import { expect } from 'chai';
import { agentAuthRequest } from '../support/device-keys';
import { type ApiAnswer, startServer, type TestServer } from '../support/server';
import { histogram } from './lib';

/**
 * Anyone with a tenant ID (it is printed in every install command) may register devices. An afternoon's attack
 * showed a few addresses filling a namespace's pending queue with 100 validly signed junk devices in 1.5 s, after
 * which the namespace's real new device was refused with 429. Now one source (an address, an IPv6 /64) and one
 * block (an IPv4 /24, an IPv6 /48) hold a bounded share of the queue, and when the queue is full of a flood the
 * oldest flood entries make way for a device from elsewhere, or for one that carries an install key; a site behind
 * one NAT address registers all its devices at once with a key.
 */
describe('security: a registration flood cannot lock a namespace out', function () {
  this.timeout(180_000);
  let server: TestServer;
  let tenant: string;
  let token: string;
  let n = 0;

  before(async () => {
    // The defaults: 100 pending, 20 new devices a minute per source, 10 pending per source and 25 per block.
    server = await startServer({
      ssh: false,
      overrides: { http: { port: 0, host: '127.0.0.1', trustProxy: true } },
    });
    const owner = await server.setup();
    tenant = owner.tenant;
    token = owner.token;
  });
  after(async () => server?.stop());

  /** A new device (a fresh key each time) registering from `from`, with an install key when given. */
  const register = (from: string, opts: { label?: string; installKey?: string } = {}): Promise<ApiAnswer> => {
    const i = ++n;
    const label = opts.label ?? `flood-${i}`;
    const req = agentAuthRequest({
      tenant,
      hostname: label,
      mac: `02:00:${((i >> 16) & 255).toString(16).padStart(2, '0')}:${((i >> 8) & 255).toString(16).padStart(2, '0')}:${(i & 255).toString(16).padStart(2, '0')}:01`,
      keyLabel: label,
    });
    return server.api('POST', '/api/devices/auth', {
      body: opts.installKey ? { ...req.body, install_key: opts.installKey } : req.body,
      headers: { ...req.headers, 'x-forwarded-for': from },
    });
  };
  /** Sends `count` registrations from each address, a few at a time, and answers them all. */
  const flood = async (addresses: string[], count: number): Promise<ApiAnswer[]> => {
    const jobs = addresses.flatMap((a) => Array.from({ length: count }, () => a));
    const answers: ApiAnswer[] = [];
    for (let i = 0; i < jobs.length; i += 8) {
      answers.push(...(await Promise.all(jobs.slice(i, i + 8).map((a) => register(a)))));
    }
    return answers;
  };
  const pending = async () => {
    const all: { uid: string; name: string; remote_addr: string; created_at: string }[] = [];
    for (let page = 1; ; page++) {
      const res = await server.api('GET', `/api/devices?status=pending&per_page=100&page=${page}`, { token });
      expect(res.status).to.equal(200);
      all.push(...res.body);
      if (res.body.length < 100) return all;
    }
  };
  const clear = async () => {
    for (const d of await pending()) {
      const res = await server.api('DELETE', `/api/devices/${d.uid}`, { token });
      expect(res.status).to.equal(200);
    }
  };
  /** How many of `devices` each address registered. */
  const bySource = (devices: { remote_addr: string }[]) => {
    const counts: Record<string, number> = {};
    for (const d of devices) counts[d.remote_addr] = (counts[d.remote_addr] ?? 0) + 1;
    return counts;
  };

  it('holds a flood from a few addresses to its share, and a device from another address registers', async () => {
    // The afternoon's attack: five addresses, twenty junk devices each, as fast as they are answered.
    const sources = ['198.51.100.10', '198.51.100.11', '198.51.100.12', '198.51.100.13', '198.51.100.14'];
    const answers = await flood(sources, 20);
    const statuses = histogram(answers);
    const queue = await pending();
    // At most 10 from one address, and at most 25 from the /24 they share.
    expect(Math.max(...Object.values(bySource(queue)))).to.be.at.most(10);
    expect(queue.length).to.equal(25);
    expect(statuses['200']).to.equal(25);
    expect(statuses['429']).to.equal(75);
    const refused = answers.find((a) => a.status === 429);
    expect(refused?.headers.get('retry-after')).to.equal('60');
    expect(refused?.body.message).to.match(/pending devices of namespace .*without an install key/);

    const real = await register('203.0.113.9', { label: 'real-device' });
    expect(real.status, JSON.stringify(real.body)).to.equal(200);
    expect((await pending()).map((d) => d.name)).to.include('real-device');
  });

  it('counts an IPv6 source by its /64 and a block by its /48', async () => {
    // Twelve addresses in each of three /64s of one /48: 10 a /64, 25 the /48.
    const nets = ['2001:db8:1:a::', '2001:db8:1:b::', '2001:db8:1:c::'];
    const answers = await flood(
      nets.flatMap((net) => Array.from({ length: 12 }, (_, i) => `${net}${(i + 1).toString(16)}`)),
      1,
    );
    expect(histogram(answers)).to.deep.equal({ 200: 25, 429: 11 });
    const queue = (await pending()).filter((d) => d.remote_addr.startsWith('2001:db8:1:'));
    expect(queue).to.have.length(25);
    for (const net of nets)
      expect(queue.filter((d) => d.remote_addr.startsWith(net)).length).to.be.at.most(10);
    // Another /48 is not held back.
    expect((await register('2001:db8:2::1')).status).to.equal(200);
  });

  it('when the queue is full of a flood, its oldest entries make way for a device from another block', async () => {
    await clear();
    // Four /24 blocks of three addresses each fill the 100 places, 25 a block.
    const blocks = ['198.51.100', '198.51.101', '198.51.102', '198.51.103'];
    await flood(
      blocks.flatMap((b) => [`${b}.20`, `${b}.21`, `${b}.22`]),
      9,
    );
    const full = await pending();
    expect(full.length).to.equal(100);

    const real = await register('203.0.113.9', { label: 'real-after-flood' });
    expect(real.status, JSON.stringify(real.body)).to.equal(200);
    const after = await pending();
    expect(after.length).to.equal(100);
    expect(after.map((d) => d.name)).to.include('real-after-flood');
    // The one that made way is the oldest flood entry (every block holds as many).
    const gone = full.filter((d) => !after.some((a) => a.uid === d.uid));
    expect(gone).to.have.length(1);
    expect(gone[0]?.created_at).to.equal(full.map((d) => d.created_at).sort()[0]);

    // The flood goes on from fresh addresses of its blocks: refused, and the real device stays.
    const more = await flood(['198.51.100.99', '198.51.101.99'], 3);
    expect(histogram(more)).to.deep.equal({ 429: 6 });
    for (const refused of more)
      expect(refused.body.message).to.match(/already (has 100|hold 25) pending devices/);
    expect((await pending()).map((d) => d.name)).to.include('real-after-flood');
  });

  it('lets a flood from ever new blocks push out only entries of the blocks that hold the most', async () => {
    // Thirty blocks of one device each: every one gets in by pushing out the oldest entry of a block holding the
    // most, never the real device, whose block holds one.
    const answers = await flood(
      Array.from({ length: 30 }, (_, i) => `100.64.${i}.1`),
      1,
    );
    expect(histogram(answers)).to.deep.equal({ 200: 30 });
    const queue = await pending();
    expect(queue.length).to.equal(100);
    expect(queue.map((d) => d.name)).to.include('real-after-flood');
  });

  it('trusts a registration with an install key: a NAT site registers all its devices from one address', async () => {
    const created = await server.api('POST', '/api/namespaces/install-keys', {
      token,
      body: { name: 'site-42' },
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(200);
    const key = created.body.key as string;
    // Sixty devices behind one address at once: beyond the per-minute, per-source and per-block limits of
    // registrations without a key, and into a queue that is full of a flood.
    const site = Array.from({ length: 60 }, (_, i) => `site-${i}`);
    const answers: ApiAnswer[] = [];
    for (let i = 0; i < site.length; i += 8) {
      answers.push(
        ...(await Promise.all(
          site.slice(i, i + 8).map((label) => register('198.18.0.1', { label, installKey: key })),
        )),
      );
    }
    expect(histogram(answers)).to.deep.equal({ 200: 60 });
    const queue = await pending();
    expect(queue.length).to.equal(100);
    expect(queue.filter((d) => d.name.startsWith('site-'))).to.have.length(60);
    // Flood entries made way, not the real device, whose block holds the fewest.
    expect(queue.map((d) => d.name)).to.include('real-after-flood');
    const listed = await server.api('GET', '/api/namespaces/install-keys', { token });
    expect(listed.body[0]).to.include({ name: 'site-42', used_times: 60 });
  });

  it('never pushes out a registration that came with a key', async () => {
    const created = await server.api('POST', '/api/namespaces/install-keys', {
      token,
      body: { name: 'fill' },
    });
    const key = created.body.key as string;
    for (
      let i = 0;
      (await pending()).some((d) => !d.name.startsWith('site-') && !d.name.startsWith('fill-'));
      i++
    ) {
      const res = await register(`198.19.${i}.1`, { label: `fill-${i}`, installKey: key });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
    }
    // Every place holds a keyed registration: nothing makes way for a newcomer, with or without a key.
    expect((await register('203.0.113.77')).status).to.equal(429);
    const keyed = await register('203.0.113.78', { installKey: key });
    expect(keyed.status).to.equal(429);
    expect(keyed.body.message).to.match(/already has 100 pending devices/);
  });
});
