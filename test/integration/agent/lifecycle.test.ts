import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, createConnection, createServer as createTcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { AgentProcess, ContractServer } from './contract-server';

describe('gatehouse-agent lifecycle against the agent protocol', function () {
  // Each test starts agent processes through tsx; on a loaded two-core machine that is slow.
  this.timeout(60_000);
  let server: ContractServer;
  let dir: string;
  const agents: AgentProcess[] = [];

  const startAgent = (extra: Record<string, string> = {}, args: string[] = []) => {
    const agent = new AgentProcess(
      {
        GATEHOUSE_SERVER_ADDRESS: server.url,
        GATEHOUSE_TENANT_ID: server.tenantId,
        GATEHOUSE_PRIVATE_KEY: join(dir, 'keys', 'agent.key'),
        GATEHOUSE_PREFERRED_HOSTNAME: 'lab-device',
        GATEHOUSE_KEEPALIVE_INTERVAL: '1',
        GATEHOUSE_SINGLE_USER_PASSWORD: 'correct horse',
        ...extra,
      },
      args,
    );
    agents.push(agent);
    return agent;
  };

  beforeEach(async () => {
    server = await ContractServer.start();
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-agent-test-'));
  });
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((agent) => agent.stop()));
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
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
    const agent = startAgent({ GATEHOUSE_PREFERRED_IDENTITY: 'aa:bb:cc:00:11:22' });
    const pendingLine = await agent.waitFor(/pending acceptance/);
    const call = server.authCalls[0]!;
    expect(call.tenant_id).to.equal(server.tenantId);
    expect(call.hostname).to.equal('lab-device');
    expect(call.identity).to.deep.equal({ mac: 'aa:bb:cc:00:11:22' });
    expect(call.sessions).to.deep.equal([]);
    expect(call.public_key).to.match(/^-----BEGIN PUBLIC KEY-----\n/);
    expect(call.info.version).to.equal('0.1.0');
    expect(call.info.platform).to.be.oneOf(['docker', 'native']);
    expect(call.info.arch).to.be.a('string').and.not.equal('');
    expect(call.info.id).to.be.a('string').and.not.equal('');
    expect(call.info.pretty_name).to.be.a('string').and.not.equal('');
    const [uid] = [...server.devices.keys()];
    expect(pendingLine).to.include(`device ${uid} is pending acceptance in namespace dev`);

    const keyPath = join(dir, 'keys', 'agent.key');
    expect(statSync(keyPath).mode & 0o777).to.equal(0o600);
    expect(readFileSync(keyPath, 'utf8')).to.match(/^-----BEGIN RSA PRIVATE KEY-----/);

    const online = server.nextTunnel();
    server.setStatus(uid!, 'accepted');
    const tunnel = await online;
    expect(await tunnel.ping()).to.be.at.least(0);
    await agent.waitFor(/online: device lab-device/);
    // The availability call repeats at the keepalive interval (1 s here).
    const calls = server.authCalls.length;
    await new Promise((resolve) => setTimeout(resolve, 2200));
    expect(server.authCalls.length).to.be.at.least(calls + 2);
  });

  it('keeps its key and identity across restarts', async () => {
    const first = startAgent({ GATEHOUSE_PREFERRED_IDENTITY: 'id-1' });
    await first.waitFor(/pending acceptance/);
    expect(await first.stop()).to.equal(0);
    const second = startAgent({ GATEHOUSE_PREFERRED_IDENTITY: 'id-1' });
    await second.waitFor(/pending acceptance/);
    const keys = new Set(server.authCalls.map((call) => call.public_key));
    expect(keys.size).to.equal(1);
    expect(server.devices.size).to.equal(1);
  });

  it('logs a rejected device and an unknown tenant clearly', async () => {
    const agent = startAgent({ GATEHOUSE_PREFERRED_IDENTITY: 'id-2' });
    await agent.waitFor(/pending acceptance/);
    server.setStatus([...server.devices.keys()][0]!, 'rejected');
    await agent.waitForNext(/was rejected in namespace dev/);
    const stranger = startAgent({
      GATEHOUSE_TENANT_ID: '00000000-0000-4000-8000-000000000000',
      GATEHOUSE_PRIVATE_KEY: join(dir, 'other.key'),
    });
    await stranger.waitFor(/knows no namespace with tenant id 00000000-0000-4000-8000-000000000000/);
  });

  it('logs an unreachable server and reconnects after the tunnel drops', async () => {
    const agent = startAgent({ GATEHOUSE_PREFERRED_IDENTITY: 'id-3' });
    await agent.waitFor(/pending acceptance/);
    const uid = [...server.devices.keys()][0]!;
    let online = server.nextTunnel();
    server.setStatus(uid, 'accepted');
    const first = await online;
    online = server.nextTunnel();
    first.close();
    await agent.waitForNext(/tunnel closed/);
    const second = await online;
    expect(second).to.not.equal(first);
    expect(await second.ping()).to.be.at.least(0);

    const lost = new AgentProcess({
      GATEHOUSE_SERVER_ADDRESS: 'http://127.0.0.1:1',
      GATEHOUSE_TENANT_ID: server.tenantId,
      GATEHOUSE_PRIVATE_KEY: join(dir, 'lost.key'),
      GATEHOUSE_SINGLE_USER_PASSWORD: 'x',
    });
    agents.push(lost);
    await lost.waitFor(/server unreachable at http:\/\/127\.0\.0\.1:1/);
    await lost.waitFor(/next attempt in \d+\.\d s/);
  });

  it('notices a server that went silent without closing and reconnects', async () => {
    // A relay between agent and server that can stop carrying bytes while keeping its
    // connections open, as a dead NAT mapping or a frozen server does.
    const frozen = new Set<import('node:net').Socket>();
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
    const connections: import('node:net').Socket[] = [];
    relay.listen(0, '127.0.0.1');
    await once(relay, 'listening');
    try {
      const agent = startAgent({
        GATEHOUSE_SERVER_ADDRESS: `http://127.0.0.1:${(relay.address() as AddressInfo).port}`,
        GATEHOUSE_PREFERRED_IDENTITY: 'id-silent',
      });
      await agent.waitFor(/pending acceptance/);
      let online = server.nextTunnel();
      const agentOnline = agent.waitForNext(/online: device/);
      server.setStatus([...server.devices.keys()][0]!, 'accepted');
      await online;
      await agentOnline;
      online = server.nextTunnel();
      // Everything open now goes silent; connections made from here on pass.
      for (const socket of connections) frozen.add(socket);
      freeze = true;
      await agent.waitForNext(/server stopped answering pings; reconnecting/);
      const second = await online;
      expect(await second.ping()).to.be.at.least(0);
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
      await agent.waitFor(/pending acceptance/);
      const online = server.nextTunnel();
      server.setStatus([...server.devices.keys()][0]!, 'accepted');
      const tunnel = await online;
      const port = (web.address() as AddressInfo).port;
      const stream = await tunnel.open({ kind: 'tcp', host: '127.0.0.1', port });
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
      await tunnel.open({ kind: 'tcp', host: '127.0.0.1', port: closedPort }).catch((error: Error) => {
        refusal = error;
      });
      expect(refusal?.message).to.match(/ECONNREFUSED/);
      expect(tunnel.closed).to.equal(false);
    } finally {
      web.close();
    }
  });
});
