import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { type LoginAnswer, startServer, type TestServer } from '../../support/server';
import { AgentProcess, eventually } from './agent-process';

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
    const a = new AgentProcess({
      server: server.url,
      tenant: me.tenant,
      keyPath: path.join(keys, `device-${n}.key`),
      identity: `02:00:00:00:00:0${n}`,
      hostname: `edge-${n}`,
    });
    agents.push(a);
    return a;
  };

  /** The agent reports docker inside a container and native elsewhere; the device lives under that kind's path. */
  const base = async (uid: string) => {
    for (const kind of ['/api/devices', '/api/containers']) {
      const res = await server.api('GET', `${kind}/${uid}`, { token: me.token });
      if (res.status === 200) return kind;
    }
    throw new Error(`device ${uid} is in neither list`);
  };
  const device = async (uid: string) =>
    (await server.api('GET', `${await base(uid)}/${uid}`, { token: me.token })).body;

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
    const kind = await base(uid);
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
    const again = new AgentProcess({
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
    const kind = await base(uids[0] as string);
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
});
