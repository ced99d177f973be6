import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, createConnection, createServer as createTcpServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { AGENT_VERSION } from '../../../agent/version';
import { AgentProcess } from '../../support/agent-process';
import { GatehouseServer } from './gatehouse-server';

/**
 * The agent program's own reactions (register, pending, accepted, rejected, unknown tenant, unreachable, restarted
 * or silent server, shutdown) against the real Gatehouse server, whose states are produced the way they happen:
 * through the API, by stopping the server, by a network that stops carrying bytes.
 */
describe('gatehouse-agent lifecycle against the real server', function () {
  // Each test starts agent processes through tsx; on a loaded two-core machine that is slow.
  this.timeout(60_000);
  let server: GatehouseServer;
  let dir: string;
  const agents: AgentProcess[] = [];
  // Accepted devices of one namespace need distinct names (a clash is refused with 409).
  let hostnames = 0;

  const startAgent = (extra: Record<string, string> = {}, args: string[] = []) => {
    const agent = new AgentProcess(
      {
        GATEHOUSE_SERVER_ADDRESS: server.url,
        GATEHOUSE_TENANT_ID: server.tenantId,
        GATEHOUSE_PRIVATE_KEY: join(dir, 'keys', `${extra['GATEHOUSE_PREFERRED_IDENTITY'] ?? 'agent'}.key`),
        GATEHOUSE_PREFERRED_HOSTNAME: `lab-${++hostnames}`,
        GATEHOUSE_KEEPALIVE_INTERVAL: '1',
        GATEHOUSE_SINGLE_USER_PASSWORD: 'correct horse',
        ...extra,
      },
      args,
    );
    agents.push(agent);
    return agent;
  };
  const callsOf = (mac: string) => server.authCalls.filter((call) => call.identity?.mac === mac);

  before(async () => {
    server = await GatehouseServer.start();
    // Every test accepts a device of its own; the namespace's default limit of 3 would refuse the fourth.
    await server.kernel.container.cradle.namespaces.setMaxDevices(server.tenantId, 50);
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-agent-test-'));
  });
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((agent) => agent.stop()));
  });
  after(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  for (const [variable, value, complaint] of [
    ['GATEHOUSE_SERVER_ADDRESS', '', /GATEHOUSE_SERVER_ADDRESS \(--server-address\) is required/],
    ['GATEHOUSE_SERVER_ADDRESS', 'ftp://example.com', /GATEHOUSE_SERVER_ADDRESS .* must be an http/],
    ['GATEHOUSE_TENANT_ID', 'not-a-uuid', /GATEHOUSE_TENANT_ID .* must be a UUID/],
    ['GATEHOUSE_PRIVATE_KEY', '', /GATEHOUSE_PRIVATE_KEY .* is required/],
    ['GATEHOUSE_KEEPALIVE_INTERVAL', '0', /GATEHOUSE_KEEPALIVE_INTERVAL .* whole seconds from 1 to 3600/],
    [
      'GATEHOUSE_PREFERRED_HOSTNAME',
      'bad name!',
      /GATEHOUSE_PREFERRED_HOSTNAME .* letters, digits or hyphens/,
    ],
    ['GATEHOUSE_PREFERRED_IDENTITY', 'x'.repeat(80), /GATEHOUSE_PREFERRED_IDENTITY .* 1 to 64/],
  ] as const) {
    it(`stops with a message naming ${variable} when it is ${value === '' ? 'missing' : `"${value.slice(0, 20)}"`}`, async () => {
      const agent = startAgent({ [variable]: value });
      expect(await agent.exited).to.equal(2);
      expect(agent.lines.join('\n')).to.match(complaint);
    });
  }

  it('registers with its identity, waits while pending, comes online once accepted', async () => {
    const mac = 'aa:bb:cc:00:11:22';
    const agent = startAgent({
      GATEHOUSE_PREFERRED_IDENTITY: mac,
      GATEHOUSE_PREFERRED_HOSTNAME: 'lab-device',
    });
    const pendingLine = await agent.waitFor(/pending acceptance/);
    const call = callsOf(mac)[0]!;
    expect(call.tenant_id).to.equal(server.tenantId);
    expect(call.hostname).to.equal('lab-device');
    expect(call.sessions).to.deep.equal([]);
    expect(call.public_key).to.match(/^-----BEGIN PUBLIC KEY-----\n/);
    expect(call.info.version).to.equal(AGENT_VERSION);

    const uid = await agent.uid();
    expect(uid).to.match(/^[0-9a-f]{64}$/);
    expect(pendingLine).to.include(`device ${uid} is pending acceptance in namespace ada`);
    // What the server kept of the registration.
    const device = await server.device(uid);
    expect(device).to.include({
      status: 'pending',
      name: 'lab-device',
      online: false,
      tenant_id: server.tenantId,
    });
    expect(device['identity']).to.deep.equal({ mac });
    expect(String(device['public_key']).trim()).to.equal(call.public_key.trim());
    const info = device['info'] as Record<string, string>;
    expect(info['version']).to.equal(AGENT_VERSION);
    expect(info['platform']).to.be.oneOf(['docker', 'native']);
    expect(info['arch']).to.be.a('string').and.not.equal('');
    expect(info['id']).to.be.a('string').and.not.equal('');
    expect(info['pretty_name']).to.be.a('string').and.not.equal('');

    const keyPath = join(dir, 'keys', `${mac}.key`);
    expect(statSync(keyPath).mode & 0o777).to.equal(0o600);
    expect(readFileSync(keyPath, 'utf8')).to.match(/^-----BEGIN RSA PRIVATE KEY-----/);

    await server.setStatus(uid, 'accept');
    await agent.waitFor(/online: device lab-device/);
    await server.waitOnline(uid);
    expect((await server.device(uid)).online).to.equal(true);
    // The availability call repeats at the keepalive interval (1 s here) while online.
    const calls = callsOf(mac).length;
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(callsOf(mac).length).to.be.at.least(calls + 2);
  });

  it('keeps its key and identity across restarts', async () => {
    const first = startAgent({ GATEHOUSE_PREFERRED_IDENTITY: 'id-1' });
    const uid = await first.uid();
    expect(await first.stop()).to.equal(0);
    const second = startAgent({ GATEHOUSE_PREFERRED_IDENTITY: 'id-1' });
    expect(await second.uid()).to.equal(uid);
    expect(new Set(callsOf('id-1').map((call) => call.public_key)).size).to.equal(1);
    const pending = await server.api('GET', '/api/devices?status=pending&per_page=100');
    expect(
      pending.body.filter((d: { identity: { mac: string } }) => d.identity.mac === 'id-1'),
    ).to.have.length(1);
  });

  it('logs a rejected device and an unknown tenant clearly', async () => {
    const agent = startAgent({ GATEHOUSE_PREFERRED_IDENTITY: 'id-2' });
    const uid = await agent.uid();
    await server.setStatus(uid, 'accept');
    await agent.waitFor(/online: device/);
    // Rejecting drops the live tunnel; the agent is told why when it dials again.
    const rejected = agent.waitForNext(/was rejected in namespace ada/);
    await server.setStatus(uid, 'reject');
    await rejected;
    expect(server.hub.isOnline(uid)).to.equal(false);

    const stranger = startAgent({
      GATEHOUSE_TENANT_ID: '00000000-0000-4000-8000-000000000000',
      GATEHOUSE_PRIVATE_KEY: join(dir, 'other.key'),
    });
    await stranger.waitFor(/knows no namespace with tenant id 00000000-0000-4000-8000-000000000000/);
  });

  it('logs an unreachable server and reconnects after the tunnel drops', async () => {
    const agent = startAgent({ GATEHOUSE_PREFERRED_IDENTITY: 'id-3' });
    const uid = await agent.uid();
    await server.setStatus(uid, 'accept');
    await agent.waitFor(/online: device/);
    await server.waitOnline(uid);
    const closed = agent.waitForNext(/tunnel closed/);
    const back = agent.waitForNext(/online: device/);
    // As the server does when a device is marked offline by the internal call.
    server.hub.disconnect(uid);
    await closed;
    await back;
    await server.waitOnline(uid);

    const lost = startAgent({
      GATEHOUSE_SERVER_ADDRESS: 'http://127.0.0.1:1',
      GATEHOUSE_PRIVATE_KEY: join(dir, 'lost.key'),
    });
    await lost.waitFor(/server unreachable at http:\/\/127\.0\.0\.1:1/);
    await lost.waitFor(/next attempt in \d+\.\d s/);
  });

  it('notices a server that went silent without closing and reconnects', async () => {
    // A relay between agent and server that can stop carrying bytes while keeping its connections open, as a dead
    // NAT mapping or a frozen server does.
    const frozen = new Set<Socket>();
    const connections: Socket[] = [];
    let freeze = false;
    const relay = createTcpServer((inbound) => {
      const outbound = createConnection({ host: '127.0.0.1', port: Number(new URL(server.url).port) });
      for (const [from, to] of [
        [inbound, outbound],
        [outbound, inbound],
      ] as const) {
        from.on('data', (chunk) => {
          if (!freeze || !frozen.has(inbound)) to.write(chunk);
        });
        from.on('error', () => to.destroy());
        from.on('close', () => to.destroy());
      }
      connections.push(inbound);
    });
    relay.listen(0, '127.0.0.1');
    await once(relay, 'listening');
    try {
      const agent = startAgent({
        GATEHOUSE_SERVER_ADDRESS: `http://127.0.0.1:${(relay.address() as AddressInfo).port}`,
        GATEHOUSE_PREFERRED_IDENTITY: 'id-silent',
      });
      const uid = await agent.uid();
      await server.setStatus(uid, 'accept');
      await agent.waitFor(/online: device/);
      // Everything open now goes silent; connections made from here on pass.
      for (const socket of connections) frozen.add(socket);
      freeze = true;
      const back = agent.waitForNext(/online: device/);
      await agent.waitForNext(/server stopped answering pings; reconnecting/);
      await back;
      await server.waitOnline(uid);
    } finally {
      for (const socket of connections) socket.destroy();
      relay.close();
    }
  });

  it('shuts down cleanly on SIGTERM and SIGINT', async () => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const agent = startAgent({ GATEHOUSE_PREFERRED_IDENTITY: `id-${signal}` });
      await agent.waitFor(/pending acceptance/);
      agent.child.kill(signal);
      expect(await agent.exited).to.equal(0);
      expect(agent.lines.join('\n')).to.include(`${signal} received, shutting down`);
    }
  });

  it('carries HTTP tunnel streams to a host:port on the device network', async () => {
    const web: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => res.end(`you sent ${req.method} ${req.url} ${body}`));
    });
    web.listen(0, '127.0.0.1');
    await once(web, 'listening');
    try {
      const agent = startAgent({ GATEHOUSE_PREFERRED_IDENTITY: 'id-4' });
      const uid = await agent.uid();
      await server.setStatus(uid, 'accept');
      await server.waitOnline(uid);
      const port = (web.address() as AddressInfo).port;
      const stream = await server.hub.open(uid, { kind: 'tcp', host: '127.0.0.1', port });
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.end('POST /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nworld');
      await once(stream, 'end');
      const response = Buffer.concat(chunks).toString();
      expect(response).to.match(/^HTTP\/1\.1 200 OK/);
      expect(response).to.match(/you sent POST \/hello world$/);

      // A closed port is refused at open, with the reason, and the tunnel stays up.
      const closedPort = await new Promise<number>((resolve) => {
        const probe = createServer().listen(0, '127.0.0.1', () => {
          const { port: free } = probe.address() as AddressInfo;
          probe.close(() => resolve(free));
        });
      });
      let refusal: Error | undefined;
      await server.hub
        .open(uid, { kind: 'tcp', host: '127.0.0.1', port: closedPort })
        .catch((error: Error) => {
          refusal = error;
        });
      expect(refusal?.message).to.match(/ECONNREFUSED/);
      expect(server.hub.isOnline(uid)).to.equal(true);
    } finally {
      web.close();
    }
  });

  // Last: it stops the server in the middle.
  it('rides out a server restart: unreachable while it is down, back online once it answers again', async () => {
    const agent = startAgent({
      GATEHOUSE_PREFERRED_IDENTITY: 'id-restart',
      GATEHOUSE_PREFERRED_HOSTNAME: 'restarted-device',
    });
    const uid = await agent.uid();
    await server.setStatus(uid, 'accept');
    await agent.waitFor(/online: device/);
    await server.waitOnline(uid);

    const closed = agent.waitForNext(/tunnel closed/);
    const unreachable = agent.waitForNext(/server unreachable at/);
    await server.halt();
    await closed;
    await unreachable;

    const back = agent.waitForNext(/online: device restarted-device/);
    await server.resume();
    await back;
    await server.waitOnline(uid);
    expect(await server.device(uid)).to.include({ status: 'accepted', online: true });
  });
});
