import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { AgentProcess } from '../../support/agent-process';
import { GatehouseServer } from './gatehouse-server';

/**
 * The server end of the tunnel contract of agent/mux, as core/tunnel/hub.ts keeps it, with a real agent: a stream
 * the server opened is destroyed with an error when its tunnel drops, and that must never take the server down,
 * whether or not the code that opened it is listening for errors at that moment.
 */
describe('the tunnel hub with a real agent', function () {
  this.timeout(60_000);
  let server: GatehouseServer;
  let dir: string;
  let agent: AgentProcess;
  let uid: string;

  before(async () => {
    server = await GatehouseServer.start();
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-hub-test-'));
    agent = new AgentProcess({
      GATEHOUSE_SERVER_ADDRESS: server.url,
      GATEHOUSE_TENANT_ID: server.tenantId,
      GATEHOUSE_PRIVATE_KEY: join(dir, 'agent.key'),
      GATEHOUSE_PREFERRED_IDENTITY: 'hub-test-device',
      GATEHOUSE_KEEPALIVE_INTERVAL: '1',
      GATEHOUSE_SINGLE_USER_PASSWORD: 'hub pw',
    });
    uid = await agent.uid();
    await server.setStatus(uid, 'accept');
    await server.waitOnline(uid);
  });
  after(async () => {
    await agent?.stop();
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('survives a tunnel dropping under streams nobody listens to for errors', async () => {
    // Opened and left alone: no 'error' listener, as a caller between its await and its wiring would leave it.
    const streams = await Promise.all([
      server.hub.open(uid, { kind: 'ssh' }),
      server.hub.open(uid, { kind: 'ssh' }),
    ]);
    // Only 'close' is watched here (events.once would also listen for 'error').
    const closed = streams.map((stream) => new Promise((resolve) => stream.once('close', resolve)));
    const back = agent.waitForNext(/online: device/);
    server.hub.disconnect(uid);
    // An unhandled 'error' would be thrown out of the event loop and fail this test as an uncaught exception.
    await Promise.all(closed);
    for (const stream of streams) expect(stream.destroyed).to.equal(true);
    expect(server.hub.isOnline(uid)).to.equal(false);
    await back;
    await server.waitOnline(uid);
    // The server still serves the device through its new tunnel.
    const again = await server.hub.open(uid, { kind: 'ssh' });
    const banner = await new Promise<string>((resolve) =>
      again.once('data', (chunk: Buffer) => resolve(String(chunk))),
    );
    expect(banner).to.match(/^SSH-2\.0-/);
    again.destroy();
  });
});
