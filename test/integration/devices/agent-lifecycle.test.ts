import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { insideContainer } from '../../../agent/identity';
import { AgentProcess, eventually } from '../../support/agent-process';
import { type LoginAnswer, startServer, type TestServer } from '../../support/server';

/**
 * The device lifecycle with real agents (agent/main.ts as child processes) against a real server on loopback:
 * register, pending, accept, online, offline when the agent stops, back when it starts, and the device limit
 * with its 720-hour rule.
 */
describe('devices: the lifecycle with real agents', function () {
  this.timeout(60_000);
  let server: TestServer;
  let me: LoginAnswer;
  let keys: string;
  const agents: AgentProcess[] = [];

  const agent = (n: number) => {
    const a = AgentProcess.device({
      server: server.url,
      tenant: me.tenant,
      keyPath: path.join(keys, `device-${n}.key`),
      identity: `02:00:00:00:00:0${n}`,
      hostname: `edge-${n}`,
    });
    agents.push(a);
    return a;
  };

  // An agent is a device wherever it runs: inside a container too.
  const kind = '/api/devices';
  const device = async (uid: string) => (await server.api('GET', `${kind}/${uid}`, { token: me.token })).body;

  before(async () => {
    server = await startServer();
    me = await server.setup();
    keys = mkdtempSync(path.join(tmpdir(), 'gatehouse-agent-keys-'));
  });
  after(async () => {
    await Promise.all(agents.map((a) => a.stop()));
    await server?.stop();
    rmSync(keys, { recursive: true, force: true });
  });

  it('registers pending, comes online once accepted, goes offline when stopped and back when started', async () => {
    const first = agent(1);
    await first.waitFor(/pending acceptance/);
    const uid = await first.uid();
    expect(uid).to.match(/^[0-9a-f]{64}$/);

    const pending = await device(uid);
    expect(pending).to.include({ status: 'pending', name: 'edge-1', online: false, acceptable: true });
    expect(pending.identity.mac).to.equal('02:00:00:00:00:01');
    expect(pending.namespace).to.equal('ada');
    const list = await server.api('GET', `${kind}?status=pending`, { token: me.token });
    expect(list.body.map((d: { uid: string }) => d.uid)).to.deep.equal([uid]);
    expect(list.headers.get('x-total-count')).to.equal('1');

    const accepted = await server.api('PATCH', `${kind}/${uid}/accept`, { token: me.token });
    expect(accepted.status).to.equal(200);
    await first.waitFor(/online: device edge-1/);
    await eventually(async () => ((await device(uid)).online ? true : undefined), 'device online');
    expect(server.kernel.container.cradle.tunnelHub.isOnline(uid)).to.equal(true);
    const stats = await server.api('GET', '/api/stats', { token: me.token });
    expect(stats.body).to.include({ registered_devices: 1, online_devices: 1, pending_devices: 0 });

    await first.stop();
    await eventually(async () => ((await device(uid)).online ? undefined : true), 'device offline');
    expect(server.kernel.container.cradle.tunnelHub.isOnline(uid)).to.equal(false);

    // Same key and identity: the same device comes back, already accepted.
    const again = AgentProcess.device({
      server: server.url,
      tenant: me.tenant,
      keyPath: path.join(keys, 'device-1.key'),
      identity: '02:00:00:00:00:01',
      hostname: 'edge-1',
    });
    agents.push(again);
    await again.waitFor(/online: device edge-1/);
    expect(await again.uid()).to.equal(uid);
    await eventually(async () => ((await device(uid)).online ? true : undefined), 'device back online');

    // Rejecting drops the tunnel at once and the agent is told why.
    await server.api('PATCH', `${kind}/${uid}/reject`, { token: me.token });
    await again.waitFor(/was rejected/);
    expect((await device(uid)).status).to.equal('rejected');
    await again.stop();
  });

  it('keeps the device limit, counting removed devices for 720 hours', async () => {
    await server.kernel.container.cradle.namespaces.setMaxDevices(me.tenant, 3);
    // Device 1 is rejected from the previous test; three more make four candidates for three slots.
    const procs = [agent(2), agent(3), agent(4)];
    const uids = await Promise.all(
      procs.map(async (p) => {
        await p.waitFor(/pending acceptance/);
        return p.uid();
      }),
    );
    const [one, two, three] = uids as [string, string, string];
    const first = (await server.api('GET', `${kind}?status=rejected`, { token: me.token })).body[0].uid;

    for (const uid of [one, two, three]) {
      expect((await server.api('PATCH', `${kind}/${uid}/accept`, { token: me.token })).status).to.equal(200);
    }
    const refused = await server.api('PATCH', `${kind}/${first}/accept`, { token: me.token });
    expect(refused.status).to.equal(402);
    expect((await device(first)).acceptable).to.equal(false);

    // Removing frees nothing: a removed device keeps its slot for 720 hours.
    expect((await server.api('DELETE', `${kind}/${three}`, { token: me.token })).status).to.equal(200);
    expect((await device(three)).status).to.be.oneOf(['removed', 'pending']);
    expect((await server.api('PATCH', `${kind}/${first}/accept`, { token: me.token })).status).to.equal(402);

    // Its agent keeps registering, so it is pending again, and acceptable at the limit: it was removed lately.
    await eventually(async () => ((await device(three)).status === 'pending' ? true : undefined), 'pending');
    expect((await device(three)).acceptable).to.equal(true);
    expect((await server.api('PATCH', `${kind}/${three}/accept`, { token: me.token })).status).to.equal(200);
    await procs[2]?.waitFor(/online: device edge-4/);

    // Removed 721 hours ago: the slot is free again, and that device no longer comes back at the limit.
    await server.api('DELETE', `${kind}/${two}`, { token: me.token });
    await server.kernel.container.cradle
      .db('devices')
      .where({ uid: two })
      .update({
        removed_at: server.kernel.container.cradle.db.raw(`now() - interval '721 hours'`),
      });
    expect((await server.api('PATCH', `${kind}/${first}/accept`, { token: me.token })).status).to.equal(200);
    await eventually(async () => ((await device(two)).status === 'pending' ? true : undefined), 'pending');
    expect((await device(two)).acceptable).to.equal(false);
    expect((await server.api('PATCH', `${kind}/${two}/accept`, { token: me.token })).status).to.equal(402);
  });

  it('lists an agent running inside a container as a device: Devices, Home and the limit agree', async () => {
    await server.kernel.container.cradle.namespaces.setMaxDevices(me.tenant, -1);
    const here = agent(5);
    await here.waitFor(/pending acceptance/);
    const uid = await here.uid();
    const total = async (list: string) =>
      Number((await server.api('GET', list, { token: me.token })).headers.get('x-total-count'));

    // What the agent says about where it runs is information only: docker on a host with /.dockerenv.
    const shown = await device(uid);
    expect(shown.info.platform).to.equal(insideContainer() ? 'docker' : 'native');
    if (existsSync('/.dockerenv')) expect(shown.info.platform).to.equal('docker');
    const pending = await server.api('GET', '/api/devices?status=pending&per_page=100', { token: me.token });
    expect(pending.body.map((d: { uid: string }) => d.uid)).to.include(uid);
    // Containers are what a container-engine connector exposes; the community edition has none.
    expect((await server.api('GET', `/api/containers/${uid}`, { token: me.token })).status).to.equal(404);
    for (const status of ['pending', 'accepted', 'rejected', 'removed']) {
      expect(await total(`/api/containers?status=${status}`), status).to.equal(0);
    }
    // Home's counts are the Devices screen's totals.
    const stats = (await server.api('GET', '/api/stats', { token: me.token })).body;
    expect(stats.pending_devices).to.equal(await total('/api/devices?status=pending'));
    expect(stats.registered_devices).to.equal(await total('/api/devices?status=accepted'));

    // The device limit counts exactly what Devices shows: at the limit, this device is the one refused.
    await server.kernel.container.cradle.namespaces.setMaxDevices(me.tenant, stats.registered_devices);
    expect((await device(uid)).acceptable).to.equal(false);
    const refused = await server.api('PATCH', `/api/devices/${uid}/accept`, { token: me.token });
    expect(refused.status).to.equal(402);
    await server.kernel.container.cradle.namespaces.setMaxDevices(me.tenant, stats.registered_devices + 1);
    expect((await device(uid)).acceptable).to.equal(true);
    expect((await server.api('PATCH', `/api/devices/${uid}/accept`, { token: me.token })).status).to.equal(
      200,
    );
    await here.waitFor(/online: device edge-5/);
    await eventually(async () => ((await device(uid)).online ? true : undefined), 'device online');
    const after = (await server.api('GET', '/api/stats', { token: me.token })).body;
    expect(after.registered_devices).to.equal(await total('/api/devices?status=accepted'));
    expect(after.online_devices).to.be.at.least(1);
    await here.stop();
  });
});
