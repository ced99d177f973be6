import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { WebSocket, WebSocketServer } from 'ws';
import { type AgentProcess, eventually, onlineAgent } from '../../support/agent-process';
import { type LoginAnswer, startServer, type TestServer } from '../../support/server';

const DOMAIN = 'tunnels.gatehouse.test';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * HTTP tunnels end to end: a real agent, a local HTTP and WebSocket service on the "device network", and requests
 * for `<address>.<domain>` to the server, streamed both ways through the agent tunnel.
 */
describe('devices: HTTP tunnels through a real agent', function () {
  this.timeout(60_000);
  let server: TestServer;
  let me: LoginAnswer;
  let keys: string;
  let agent: AgentProcess;
  let uid: string;
  let service: Server;
  let servicePort: number;
  let wss: WebSocketServer;

  /** A request to the Gatehouse server with a tunnel Host header. */
  const viaTunnel = (address: string, opts: { method?: string; path?: string; body?: Buffer } = {}) =>
    new Promise<Answer>((resolve, reject) => {
      const port = new URL(server.url).port;
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: opts.method ?? 'GET',
          path: opts.path ?? '/',
          headers: { host: `${address}.${DOMAIN}:${port}` },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks).toString(),
            }),
          );
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(opts.body);
    });

  const createTunnel = async (ttl: number, port = servicePort) => {
    const res = await server.api('POST', `/api/devices/${uid}/tunnels`, {
      token: me.token,
      body: { host: '127.0.0.1', port, ttl },
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body as { address: string; expires_in: string | null };
  };

  before(async () => {
    service = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        res.writeHead(201, { 'content-type': 'application/json', 'x-service': 'yes' });
        res.end(
          JSON.stringify({
            method: req.method,
            url: req.url,
            host: req.headers.host,
            forwardedHost: req.headers['x-forwarded-host'],
            length: body.length,
            sum: body.reduce((a, b) => (a + b) % 65521, 0),
          }),
        );
      });
    });
    wss = new WebSocketServer({ server: service });
    wss.on('connection', (ws) => ws.on('message', (m: Buffer) => ws.send(`echo:${m.toString()}`)));
    service.listen(0, '127.0.0.1');
    await once(service, 'listening');
    servicePort = (service.address() as AddressInfo).port;

    server = await startServer({ overrides: { tunnels: { domain: DOMAIN } } });
    me = await server.setup();
    keys = mkdtempSync(path.join(tmpdir(), 'gatehouse-tunnel-keys-'));
    ({ agent, uid } = await onlineAgent(server, server.kernel.container.cradle.tunnelHub, {
      tenant: me.tenant,
      ownerToken: me.token,
      keyDir: keys,
      identity: '02:00:00:00:01:01',
      hostname: 'web-1',
    }));
  });
  after(async () => {
    await agent?.stop();
    await server?.stop();
    wss?.close();
    service?.close();
    rmSync(keys, { recursive: true, force: true });
  });

  it('proxies requests and bodies both ways to host:port on the device network', async () => {
    const tunnel = await createTunnel(-1);
    expect(tunnel.address).to.match(/^[0-9a-f]{32}$/);
    expect(tunnel.expires_in).to.equal(null);

    const get = await viaTunnel(tunnel.address, { path: '/hello?x=1' });
    expect(get.status).to.equal(201);
    expect(get.headers['x-service']).to.equal('yes');
    const seen = JSON.parse(get.body);
    expect(seen).to.include({ method: 'GET', url: '/hello?x=1', host: `127.0.0.1:${servicePort}` });
    expect(seen.forwardedHost).to.contain(`${tunnel.address}.${DOMAIN}`);

    // 3 MiB through the tunnel: many frames, windows and backpressure on the way.
    const big = Buffer.alloc(3 * 1024 * 1024);
    for (let i = 0; i < big.length; i++) big[i] = i % 251;
    const post = await viaTunnel(tunnel.address, { method: 'POST', path: '/upload', body: big });
    expect(JSON.parse(post.body)).to.include({
      method: 'POST',
      length: big.length,
      sum: big.reduce((a, b) => (a + b) % 65521, 0),
    });

    const listed = await server.api('GET', `/api/devices/${uid}/tunnels`, { token: me.token });
    expect(listed.body.map((t: { address: string }) => t.address)).to.include(tunnel.address);
    expect(listed.headers.get('x-total-count')).to.equal('1');
  });

  it('carries WebSockets, and closes them when the tunnel is deleted', async () => {
    const tunnel = await createTunnel(3600);
    const port = new URL(server.url).port;
    const ws = new WebSocket(`ws://127.0.0.1:${port}/socket`, {
      headers: { host: `${tunnel.address}.${DOMAIN}:${port}` },
    });
    await once(ws, 'open');
    ws.send('ping-1');
    const [reply] = await once(ws, 'message');
    expect(String(reply)).to.equal('echo:ping-1');

    const closed = once(ws, 'close');
    const del = await server.api('DELETE', `/api/devices/${uid}/tunnels/${tunnel.address}`, {
      token: me.token,
    });
    expect(del.status).to.equal(200);
    await closed;
    const after = await viaTunnel(tunnel.address);
    expect(after.status).to.equal(404);
    expect(after.body).to.contain('does not exist or has expired');
  });

  it('stops answering when the ttl runs out', async () => {
    const tunnel = await createTunnel(1);
    expect(Date.parse(tunnel.expires_in ?? '')).to.be.greaterThan(Date.now() - 1000);
    await eventually(
      async () => ((await viaTunnel(tunnel.address)).status === 404 ? true : undefined),
      'tunnel expiry',
      5000,
    );
    const listed = await server.api('GET', `/api/devices/${uid}/tunnels`, { token: me.token });
    expect(listed.body.map((t: { address: string }) => t.address)).not.to.include(tunnel.address);
  });

  it('answers 502 with a clear page when the service or the device is unreachable', async () => {
    // A port nothing listens on: the agent's connect is refused.
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const deadPort = (closed.address() as AddressInfo).port;
    closed.close();
    const toNothing = await createTunnel(-1, deadPort);
    const refused = await viaTunnel(toNothing.address);
    expect(refused.status).to.equal(502);
    expect(refused.body).to.contain(`127.0.0.1:${deadPort}`);

    const tunnel = await createTunnel(-1);
    await agent.stop();
    await eventually(
      async () => (server.kernel.container.cradle.tunnelHub.isOnline(uid) ? undefined : true),
      'offline',
    );
    const offline = await viaTunnel(tunnel.address);
    expect(offline.status).to.equal(502);
    expect(offline.headers['content-type']).to.contain('text/html');
    expect(offline.body).to.contain('The device is offline');
  });

  it('rejects bad tunnel input with 400 and other devices with 404', async () => {
    for (const body of [
      { host: 'example.com', port: 80, ttl: 60 },
      { host: '127.0.0.1', port: 0, ttl: 60 },
      { host: '127.0.0.1', port: 65536, ttl: 60 },
      { host: '127.0.0.1', port: 80, ttl: -2 },
      { host: '127.0.0.1', port: 80, ttl: 9_223_372_037 },
      { host: '127.0.0.1', port: 80 },
    ]) {
      const res = await server.api('POST', `/api/devices/${uid}/tunnels`, { token: me.token, body });
      expect(res.status, JSON.stringify(body)).to.equal(400);
    }
    const longest = await createTunnel(9_223_372_036);
    expect(Date.parse(longest.expires_in ?? '')).to.be.greaterThan(Date.now() + 100 * 365 * 86400_000);
    const other = 'f'.repeat(64);
    expect((await server.api('GET', `/api/devices/${other}/tunnels`, { token: me.token })).status).to.equal(
      404,
    );
    const badAddress = await server.api('DELETE', `/api/devices/${uid}/tunnels/xyz`, { token: me.token });
    expect(badAddress.status).to.equal(400);
    const unknown = await server.api('DELETE', `/api/devices/${uid}/tunnels/${'0'.repeat(32)}`, {
      token: me.token,
    });
    expect(unknown.status).to.equal(404);
  });
});
