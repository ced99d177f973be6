import { generateKeyPairSync } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, createConnection } from 'node:net';
import type { Duplex } from 'node:stream';
import { TokenService } from '@gatehouse/core';
import { type MuxSession, serveTunnel, TUNNEL_MAX_MESSAGE } from '@gatehouse/protocol/mux';
import { expect } from 'chai';
import { WebSocket } from 'ws';
import { eventually } from '../../support/agent-process';
import { agentAuthRequest, deviceKey, tunnelHeaders } from '../../support/device-keys';
import { type LoginAnswer, startServer, type TestServer } from '../../support/server';

/**
 * The agent tunnel endpoint under bad input: forged, expired and other-tenant device tokens are refused; a
 * malformed or oversized frame closes that tunnel and nothing else; a newer tunnel replaces an older one; the
 * internal offline call is not reachable on the public listener. The agent end is the real multiplexer library.
 */
describe('devices: the tunnel endpoint under bad input', function () {
  this.timeout(30_000);
  let server: TestServer;
  let me: LoginAnswer;
  let echo: Server;
  let echoPort: number;
  const sockets: WebSocket[] = [];

  const register = async (n: number, tenant = me.tenant) => {
    const res = await server.api(
      'POST',
      '/api/devices/auth',
      agentAuthRequest({
        tenant,
        hostname: `tunnel-${n}`,
        mac: `02:00:00:00:20:${String(n).padStart(2, '0')}`,
        keyLabel: `key-${n}`,
      }),
    );
    expect(res.status).to.equal(200);
    return { ...(res.body as { uid: string; token: string }), key: `key-${n}` };
  };
  /** The proof of possession of the device key a real agent sends with its tunnel (agent protocol 2). */
  const proof = (d: { uid: string; key: string }) => tunnelHeaders(d.uid, deviceKey(d.key).privateKey);
  const accepted = async (n: number) => {
    const d = await register(n);
    expect((await server.api('PATCH', `/api/devices/${d.uid}/accept`, { token: me.token })).status).to.equal(
      200,
    );
    return d;
  };

  /** Dials the tunnel endpoint; resolves with the socket once open, or the refusal status and body. */
  const dial = (token: string | undefined, extra: Record<string, string> = {}) =>
    new Promise<{ ws: WebSocket } | { status: number; body: string }>((resolve, reject) => {
      const ws = new WebSocket(`${server.url.replace('http', 'ws')}/agent/connection`, {
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...extra },
        perMessageDeflate: false,
        maxPayload: TUNNEL_MAX_MESSAGE,
      });
      sockets.push(ws);
      ws.once('open', () => resolve({ ws }));
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c: Buffer) => {
          body += c.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      ws.once('error', reject);
    });

  /** A fake agent on the real multiplexer: serves tcp streams by connecting to host:port. */
  const agentOn = (ws: WebSocket): MuxSession =>
    serveTunnel(ws, {
      onStream: (header, stream: Duplex) =>
        new Promise<void>((resolve, reject) => {
          if (header.kind !== 'tcp') return reject(new Error('tcp only'));
          const socket = createConnection({ host: header.host, port: header.port });
          socket.once('error', reject);
          socket.once('connect', () => {
            socket.pipe(stream).pipe(socket);
            stream.on('close', () => socket.destroy());
            resolve();
          });
        }),
    });

  const roundTrip = async (uid: string) => {
    const stream = await server.kernel.container.cradle.tunnelHub.open(uid, {
      kind: 'tcp',
      host: '127.0.0.1',
      port: echoPort,
    });
    stream.end('GET / HTTP/1.0\r\n\r\n');
    const chunks: Buffer[] = [];
    for await (const c of stream) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString();
  };

  before(async () => {
    echo = createServer((_req, res) => res.end('still here'));
    echo.listen(0, '127.0.0.1');
    await once(echo, 'listening');
    echoPort = (echo.address() as AddressInfo).port;
    server = await startServer();
    me = await server.setup();
  });
  after(async () => {
    for (const ws of sockets) ws.terminate();
    await server?.stop();
    echo?.close();
  });

  it('refuses forged, expired, user and other-tenant tokens, and devices not accepted', async () => {
    const d = await register(1);
    const tokens = server.kernel.container.cradle.tokens;

    expect(await dial(undefined)).to.include({ status: 401 });
    expect(await dial('not-a-jwt')).to.include({ status: 401 });
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const forger = new TokenService(privateKey, publicKey, 3600);
    expect(await dial(await forger.sign({ kind: 'device', sub: d.uid, tenant: me.tenant }))).to.include({
      status: 401,
    });
    expect(await dial(await tokens.sign({ kind: 'device', sub: d.uid, tenant: me.tenant }, -60))).to.include({
      status: 401,
    });
    expect(await dial(me.token)).to.include({ status: 401 });
    const otherTenant = '00000000-0000-4000-8000-000000000001';
    expect(await dial(await tokens.sign({ kind: 'device', sub: d.uid, tenant: otherTenant }))).to.include({
      status: 404,
    });

    const pending = await dial(d.token, proof(d));
    expect(pending).to.include({ status: 403 });
    expect(JSON.parse((pending as { body: string }).body)).to.deep.equal({
      message: 'device is pending',
      status: 'pending',
    });
  });

  it('closes a tunnel that sends a malformed or oversized frame, and only that one', async () => {
    const good = await accepted(10);
    const bad = await accepted(11);
    const worse = await accepted(12);
    const goodDial = await dial(good.token, proof(good));
    if (!('ws' in goodDial)) throw new Error(`good tunnel refused: ${goodDial.status}`);
    agentOn(goodDial.ws);
    await eventually(
      async () => (server.kernel.container.cradle.tunnelHub.isOnline(good.uid) ? true : undefined),
      'good tunnel',
    );

    const badDial = await dial(bad.token, proof(bad));
    if (!('ws' in badDial)) throw new Error('bad tunnel refused');
    const badClosed = once(badDial.ws, 'close');
    // Frame type 99 does not exist.
    badDial.ws.send(Buffer.from([99, 0, 0, 0, 1, 0, 0, 0, 0]));
    const [code] = await badClosed;
    expect(code).to.equal(1002);

    const worseDial = await dial(worse.token, proof(worse));
    if (!('ws' in worseDial)) throw new Error('worse tunnel refused');
    const worseClosed = once(worseDial.ws, 'close');
    worseDial.ws.send(Buffer.alloc(TUNNEL_MAX_MESSAGE + 1));
    const [tooBig] = await worseClosed;
    expect(tooBig).to.equal(1009);

    const hub = server.kernel.container.cradle.tunnelHub;
    await eventually(
      async () => (hub.isOnline(bad.uid) || hub.isOnline(worse.uid) ? undefined : true),
      'closed',
    );
    expect(hub.isOnline(good.uid)).to.equal(true);
    expect(await roundTrip(good.uid)).to.contain('still here');
  });

  it('lets a newer tunnel replace an older one without marking the device offline', async () => {
    const d = await accepted(20);
    const first = await dial(d.token, proof(d));
    if (!('ws' in first)) throw new Error('first tunnel refused');
    agentOn(first.ws);
    const hub = server.kernel.container.cradle.tunnelHub;
    // Stored online first: the presence write is asynchronous, and a read before it lands says nothing.
    await eventually(
      async () =>
        (await server.api('GET', `/api/devices/${d.uid}`, { token: me.token })).body.online
          ? true
          : undefined,
      'first tunnel written online',
    );
    const firstClosed = once(first.ws, 'close');
    const second = await dial(d.token, proof(d));
    if (!('ws' in second)) throw new Error('second tunnel refused');
    agentOn(second.ws);
    await firstClosed;
    expect(await roundTrip(d.uid)).to.contain('still here');
    expect(hub.isOnline(d.uid)).to.equal(true);
    // Whatever the old tunnel's close queued (an offline would be the defect) has been written by now.
    await hub.presenceWritten(d.uid);
    const device = await server.api('GET', `/api/devices/${d.uid}`, { token: me.token });
    expect(device.body.online).to.equal(true);
  });

  it('serves the offline call on the internal listener only', async () => {
    const d = await accepted(30);
    const t = await dial(d.token, proof(d));
    if (!('ws' in t)) throw new Error('tunnel refused');
    agentOn(t.ws);
    await eventually(
      async () =>
        (await server.api('GET', `/api/devices/${d.uid}`, { token: me.token })).body.online
          ? true
          : undefined,
      'online',
    );
    const publicly = await server.api('POST', `/internal/devices/${d.uid}/offline`, { token: me.token });
    expect(publicly.status).to.equal(404);
    expect(server.kernel.container.cradle.tunnelHub.isOnline(d.uid)).to.equal(true);

    const internal = server.kernel.internalUrl;
    expect(new URL(internal).hostname).to.equal('127.0.0.1');
    const unknown = await fetch(`${internal}/internal/devices/${'e'.repeat(64)}/offline`, { method: 'POST' });
    expect(unknown.status).to.equal(404);
    const closed = once(t.ws, 'close');
    const res = await fetch(`${internal}/internal/devices/${d.uid}/offline`, { method: 'POST' });
    expect(res.status).to.equal(200);
    await closed;
    const after = await server.api('GET', `/api/devices/${d.uid}`, { token: me.token });
    expect(after.body.online).to.equal(false);
  });
});
