import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { proofHeaders } from '@gatehouse/protocol/agent-proof';
import { serveTunnel, TUNNEL_MAX_MESSAGE } from '@gatehouse/protocol/mux';
import { expect } from 'chai';
import ssh2 from 'ssh2';
import { WebSocket } from 'ws';
import { DEVICE_PASSWORD, GatewayWorld } from '../integration/ssh/gateway-world';
import { eventually } from '../support/agent-process';
import { keyedAuthRequest, registrationHeaders, rsaDeviceKey, tunnelHeaders } from '../support/device-keys';

type Dialed = { ws: WebSocket } | { status: number; body: string };

/**
 * A security review (critical): `POST /api/devices/auth` gave a device token to anyone with the tenant id, identity and
 * public key (all readable from the API); the newest tunnel replaced the device's real one; the gateway took any
 * host key from the agent, so users' passwords went to an impostor. The device here is a real agent.
 */
describe('security: nobody but the holder of a device key acts as that device', function () {
  this.timeout(180_000);
  let world: GatewayWorld;
  let real: {
    uid: string;
    public_key: string;
    identity: { mac: string };
    info: Record<string, string>;
    name: string;
  };
  let realKey: string;
  const impostor = rsaDeviceKey();
  const sockets: WebSocket[] = [];

  const auth = (body: unknown, headers: Record<string, string> = {}) =>
    world.server.api('POST', '/api/devices/auth', { body, headers });
  /** What anyone who can read the device from the API can send. */
  const copied = () => ({
    info: { ...real.info, version: '0.2.0' },
    sessions: [],
    hostname: real.name,
    identity: { mac: real.identity.mac },
    public_key: real.public_key,
    tenant_id: world.owner.tenant,
  });
  const dial = (headers: Record<string, string>): Promise<Dialed> =>
    new Promise((resolve, reject) => {
      const ws = new WebSocket(`${world.server.url.replace('http', 'ws')}/agent/connection`, {
        headers,
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
  const hub = () => world.server.kernel.container.cradle.tunnelHub;
  const stillReachable = async () => {
    expect(hub().isOnline(real.uid)).to.equal(true);
    const res = await world.sshPassword(['echo', 'still-me']);
    expect(res.code, res.stderr).to.equal(0);
    expect(res.stdout.toString()).to.equal('still-me\n');
  };

  before(async () => {
    world = await GatewayWorld.start({ deviceName: 'vault' });
    real = (await world.api('GET', `/api/devices/${world.deviceUid}`)).body;
    realKey = readFileSync(path.join(world.dir, 'vault.key'), 'utf8');
  });
  after(async () => {
    for (const ws of sockets) ws.terminate();
    await world?.stop();
  });

  it('gives no token to a caller with the public key only, a stale proof or a replayed one', async () => {
    const body = copied();
    const noProof = await auth(body);
    expect(noProof.status).to.equal(403);
    expect(noProof.body.message).to.match(/agent protocol 1.*needs agent protocol 2.*Update the agent/);

    const otherKey = await auth(body, registrationHeaders(body, impostor.privateKey));
    expect(otherKey.status).to.equal(401);
    expect(otherKey.body.message).to.contain('the signature is not by the device key');

    const forged = { ...registrationHeaders(body, realKey), 'x-gatehouse-signature': 'A'.repeat(344) };
    expect((await auth(body, forged)).status).to.equal(401);

    // Signed by the real key, but for another hostname: a proof covers the request it was made for only.
    const elsewhere = await auth({ ...body, hostname: 'elsewhere' }, registrationHeaders(body, realKey));
    expect(elsewhere.status).to.equal(401);

    const stale = proofHeaders(
      {
        purpose: 'register',
        tenantId: body.tenant_id,
        mac: body.identity.mac,
        publicKey: body.public_key,
        hostname: body.hostname,
      },
      realKey,
      Math.floor(Date.now() / 1000) - 1000,
    );
    const old = await auth(body, stale);
    expect(old.status).to.equal(401);
    expect(old.body.message).to.contain("from the server's clock");

    // The device itself: once. The same request again (captured on the way) is a replay.
    const headers = registrationHeaders(body, realKey);
    const first = await auth(body, headers);
    expect(first.status).to.equal(200);
    expect(first.body.uid).to.equal(real.uid);
    const replay = await auth(body, headers);
    expect(replay.status).to.equal(401);
    expect(replay.body.message).to.contain('it was used before');

    for (const res of [noProof, otherKey, old, replay, elsewhere])
      expect(res.body).to.not.have.property('token');
    await stillReachable();
  });

  it('makes the same identity with another key a separate pending device, which the owner sees and cannot swap in', async () => {
    const body = { ...copied(), public_key: impostor.publicKey };
    const res = await auth(body, registrationHeaders(body, impostor.privateKey));
    expect(res.status).to.equal(200);
    expect(res.body.uid).to.not.equal(real.uid);
    const twin = await world.api('GET', `/api/devices/${res.body.uid}`);
    expect(twin.body).to.include({ status: 'pending', name: real.name });
    expect(twin.body.identity_conflict).to.deep.equal({ uid: real.uid, name: real.name });
    const pending = await world.api('GET', '/api/devices?status=pending&per_page=100');
    expect(pending.body.find((d: { uid: string }) => d.uid === res.body.uid).identity_conflict.uid).to.equal(
      real.uid,
    );
    const original = await world.api('GET', `/api/devices/${real.uid}`);
    expect(original.body).to.include({ status: 'accepted', identity_conflict: null });

    // Accepting it adds nothing under the real device's name, and its token opens no tunnel meanwhile.
    const accept = await world.api('PATCH', `/api/devices/${res.body.uid}/accept`);
    expect(accept.status).to.equal(409);
    expect(accept.body).to.deep.equal(['name']);
    const tunnel = await dial({
      authorization: `Bearer ${res.body.token}`,
      ...tunnelHeaders(res.body.uid, impostor.privateKey),
    });
    expect(tunnel).to.include({ status: 403 });
    await stillReachable();
  });

  it('never lets a tunnel without the device key replace the real one, even with a leaked token', async () => {
    const tokens = world.server.kernel.container.cradle.tokens;
    const leaked = await tokens.sign({ kind: 'device', sub: real.uid, tenant: world.owner.tenant, ap: 2 });
    const before = world.agent.lines.filter((l) => l.includes('tunnel closed')).length;

    const bare = await dial({ authorization: `Bearer ${leaked}` });
    expect(bare).to.include({ status: 403 });
    expect(JSON.parse((bare as { body: string }).body).message).to.contain('needs agent protocol 2');

    const wrongKey = await dial({
      authorization: `Bearer ${leaked}`,
      ...tunnelHeaders(real.uid, impostor.privateKey),
    });
    expect(wrongKey).to.include({ status: 401 });

    // A proof made for another device's tunnel proves nothing for this one.
    const otherUid = await dial({
      authorization: `Bearer ${leaked}`,
      ...tunnelHeaders('e'.repeat(64), realKey),
    });
    expect(otherUid).to.include({ status: 401 });

    // A token from before agent protocol 2 (no proof behind it) opens nothing, whatever comes with it.
    const oldToken = await tokens.sign({ kind: 'device', sub: real.uid, tenant: world.owner.tenant });
    const old = await dial({ authorization: `Bearer ${oldToken}`, ...tunnelHeaders(real.uid, realKey) });
    expect(old).to.include({ status: 401 });
    const device = await world.server.api('POST', '/api/auth/ssh', {
      token: oldToken,
      body: { fingerprint: 'aa', data: 'AAAA' },
    });
    expect(device.status).to.equal(401);

    expect(world.agent.lines.filter((l) => l.includes('tunnel closed')).length).to.equal(before);
    await stillReachable();
  });

  it('refuses an agent showing a host key other than the registered one, before any password is sent', async () => {
    // A device whose tunnel is genuine (its agent holds key A), but whose SSH end shows key B: what a user would
    // meet if anything between the tunnel and the device's SSH server were not the device.
    const keyA = rsaDeviceKey();
    const keyB = rsaDeviceKey();
    const { body, headers } = keyedAuthRequest({
      tenant: world.owner.tenant,
      hostname: 'mimic',
      mac: '02:00:00:00:44:01',
      key: keyA,
    });
    const reg = await auth(body, headers);
    expect(reg.status).to.equal(200);
    expect((await world.api('PATCH', `/api/devices/${reg.body.uid}/accept`)).status).to.equal(200);

    const heard: string[] = [];
    const sshEnd = (hostKey: string) =>
      new ssh2.Server({ hostKeys: [hostKey] }, (conn) => {
        conn.on('error', () => {});
        conn.on('authentication', (ctx) => {
          heard.push(ctx.method === 'password' ? `password:${ctx.password}` : ctx.method);
          ctx.reject(['password']);
        });
      });
    let serving = sshEnd(keyB.privateKey);
    const opened = await dial({
      authorization: `Bearer ${reg.body.token}`,
      ...tunnelHeaders(reg.body.uid, keyA.privateKey),
    });
    if (!('ws' in opened)) throw new Error(`tunnel refused: ${opened.status} ${opened.body}`);
    serveTunnel(opened.ws, {
      onStream: async (header, stream: Duplex) => {
        if (header.kind !== 'ssh') throw new Error('ssh only');
        serving.injectSocket(stream as unknown as Parameters<typeof serving.injectSocket>[0]);
      },
    });
    await world.waitOnline(reg.body.uid);

    const refused = await world.sshPassword(['true'], [], world.target('root', 'mimic'));
    expect(refused.code).to.equal(255);
    expect(refused.stderr).to.contain(
      `gatehouse: device ${world.namespace}.mimic answered with a host key that is not its registered key`,
    );
    expect(heard).to.deep.equal([]);
    // The journal writes events in batches (a quarter second), so the refusal may reach the store just after ssh
    // exits: wait for it, bounded.
    const refusal = await eventually(async () => {
      const sessions = await world.api('GET', '/api/sessions?per_page=100');
      const session = sessions.body.find((s: { device_uid: string }) => s.device_uid === reg.body.uid);
      return session?.events.items.find((e: { type: string }) => e.type === 'refused');
    }, 'the refused event in the session');
    expect(refusal.data).to.deep.include({ reason: 'host-key' });

    // Control: the same device showing its registered key gets the sign-in, password and all.
    serving = sshEnd(keyA.privateKey);
    const control = await world.sshPassword(['true'], [], world.target('root', 'mimic'));
    expect(control.code).to.equal(255);
    expect(heard).to.include(`password:${DEVICE_PASSWORD}`);
  });
});
