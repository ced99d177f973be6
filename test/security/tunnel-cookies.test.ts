import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { type AgentProcess, onlineAgent } from '../support/agent-process';
import { type LoginAnswer, startServer, type TestServer } from '../support/server';

const DOMAIN = 'tunnels.cookies.test';

/**
 * Every HTTP tunnel answers at `<address>.<tunnels.domain>`, so a tunnelled site could set a cookie with
 * `Domain=<tunnels.domain>`, which the browser then sends to every tenant's tunnels (and lets them read or
 * overwrite each other's). The proxy now strips the Domain attribute from the cookies a tunnelled site sets: each
 * cookie stays with the one tunnel host that set it. (Cookies set by a page's script are the browser's business:
 * the docs say to serve tunnels from a domain of their own on the public suffix list.)
 */
describe("security: a tunnelled site's cookies stay with its own tunnel", function () {
  this.timeout(60_000);
  let server: TestServer;
  let me: LoginAnswer;
  let keys: string;
  let agent: AgentProcess;
  let uid: string;
  let service: Server;

  before(async () => {
    service = createServer((_req, res) => {
      res.setHeader('set-cookie', [
        `wide=1; Domain=${DOMAIN}; Path=/; HttpOnly`,
        `dotted=2; path=/; domain=.${DOMAIN}; Secure`,
        'plain=3; Path=/; SameSite=Lax',
        'odd=a;b; DOMAIN = example.com ;Max-Age=60',
      ]);
      res.end('ok');
    });
    service.listen(0, '127.0.0.1');
    await once(service, 'listening');
    server = await startServer({ overrides: { tunnels: { domain: DOMAIN } } });
    me = await server.setup();
    keys = mkdtempSync(path.join(tmpdir(), 'gatehouse-cookie-keys-'));
    ({ agent, uid } = await onlineAgent(server, server.kernel.container.cradle.tunnelHub, {
      tenant: me.tenant,
      ownerToken: me.token,
      keyDir: keys,
      identity: '02:00:00:00:07:01',
      hostname: 'cookie-site',
    }));
  });
  after(async () => {
    await agent?.stop();
    await server?.stop();
    service?.close();
    if (keys) rmSync(keys, { recursive: true, force: true });
  });

  it('passes the cookies on without their Domain attribute, everything else as set', async () => {
    const tunnel = await server.api('POST', `/api/devices/${uid}/tunnels`, {
      token: me.token,
      body: { host: '127.0.0.1', port: (service.address() as AddressInfo).port, ttl: -1 },
    });
    expect(tunnel.status, JSON.stringify(tunnel.body)).to.equal(200);
    const port = new URL(server.url).port;
    const cookies = await new Promise<string[]>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port, path: '/', headers: { host: `${tunnel.body.address}.${DOMAIN}:${port}` } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.headers['set-cookie'] ?? []));
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(cookies).to.deep.equal([
      'wide=1; Path=/; HttpOnly',
      'dotted=2; path=/; Secure',
      'plain=3; Path=/; SameSite=Lax',
      'odd=a;b;Max-Age=60',
    ]);
  });
});
