import { once } from 'node:events';
import type { Duplex } from 'node:stream';
import { serveTunnel, TUNNEL_MAX_MESSAGE } from '@gatehouse/protocol/mux';
import { expect } from 'chai';
import ssh2 from 'ssh2';
import { WebSocket } from 'ws';
import { GatewayWorld } from '../integration/ssh/gateway-world';
import { keyedAuthRequest, rsaDeviceKey, tunnelHeaders } from '../support/device-keys';
import type { ApiAnswer } from '../support/server';
import { registerDevice } from './world';

/** What a device did with one gateway sign-in it received: the blob, and the server's answers when it asked. */
interface Heard {
  blob: Buffer;
  signature: Buffer;
  asked: { other: ApiAnswer; own: ApiAnswer; again: ApiAnswer };
}

/**
 * The gateway key signs in to agents that check it through `POST /api/auth/ssh`: the agent asks the server to sign
 * the blob it was given and compares. Any accepted device could have the server sign any blob with that key, and
 * with it sign in as the gateway to every other agent of every namespace. The server now signs only the blob the
 * gateway itself signed, to sign in to the device that asks, once.
 */
describe('security: the gateway key signs nothing but the gateway sign-in to the device that asks', function () {
  this.timeout(180_000);
  let world: GatewayWorld;
  let key: { file: string; data: string };
  const sockets: WebSocket[] = [];
  const fingerprint = () => world.server.kernel.container.cradle.gatewaySigner.fingerprint;
  const askToSign = (token: string, blob: Buffer) =>
    world.server.api('POST', '/api/auth/ssh', {
      token,
      body: { fingerprint: fingerprint(), data: blob.toString('base64') },
    });

  before(async () => {
    // An agent that takes sessions as SSH inside its tunnel: the kind that checks the gateway key with the server.
    world = await GatewayWorld.start({
      deviceName: 'older-agent',
      agentEnv: { GATEHOUSE_SESSION_PROTOCOL: 'off' },
    });
    expect(await world.streamKinds()).to.deep.equal([]);
    key = await world.keyForEveryHost('signatures');
  });
  after(async () => {
    for (const ws of sockets) ws.terminate();
    await world?.stop();
  });

  it('still signs a user with a namespace key in to an agent that checks the gateway key', async () => {
    const res = await world.sshKey(key.file, ['echo', 'signed-in-by-key']);
    expect(res.code, res.stderr).to.equal(0);
    expect(res.stdout.toString()).to.equal('signed-in-by-key\n');
  });

  it('signs no blob a device made up, however well-formed', async () => {
    const device = await registerDevice(
      world.server,
      { tenant: world.owner.tenant, ownerToken: world.owner.token },
      { accept: true },
    );
    // A sign-in blob: the session id of a connection the device chose, then a userauth request for any agent.
    const made = Buffer.concat([
      Buffer.from([0, 0, 0, 32]),
      Buffer.alloc(32, 9),
      Buffer.from([50]),
      sshString('root'),
      sshString('ssh-connection'),
      sshString('publickey'),
      Buffer.from([1]),
      sshString('ssh-ed25519'),
    ]);
    const res = await askToSign(device.token, made);
    expect(res.status).to.equal(403);
    expect(res.body).to.not.have.property('signature');
  });

  it("answers a gateway sign-in's blob to the device it signs in to, once, and to no other device", async () => {
    const other = await registerDevice(
      world.server,
      { tenant: world.owner.tenant, ownerToken: world.owner.token },
      { accept: true },
    );
    // A device whose SSH end is this test: it hears the gateway's sign-in and asks the server about it.
    const hostKey = rsaDeviceKey();
    const reg = await world.server.api(
      'POST',
      '/api/devices/auth',
      keyedAuthRequest({
        tenant: world.owner.tenant,
        hostname: 'listener',
        mac: '02:00:00:00:55:01',
        key: hostKey,
      }),
    );
    expect(reg.status, JSON.stringify(reg.body)).to.equal(200);
    expect((await world.api('PATCH', `/api/devices/${reg.body.uid}/accept`)).status).to.equal(200);

    const heard: Heard[] = [];
    const sshEnd = new ssh2.Server({ hostKeys: [hostKey.privateKey] }, (conn) => {
      conn.on('error', () => {});
      conn.on('authentication', (ctx) => {
        if (ctx.method !== 'publickey') return ctx.reject(['publickey']);
        if (!ctx.signature || !ctx.blob) return ctx.accept();
        const { blob, signature } = ctx;
        (async () => {
          const asked = {
            other: await askToSign(other.token, blob),
            own: await askToSign(reg.body.token, blob),
            again: await askToSign(reg.body.token, blob),
          };
          heard.push({ blob, signature, asked });
          const answer = Buffer.from(String(asked.own.body?.signature ?? ''), 'base64');
          if (asked.own.status === 200 && answer.equals(signature)) ctx.accept();
          else ctx.reject();
        })().catch(() => ctx.reject());
      });
      conn.on('ready', () =>
        conn.on('session', (accept) =>
          accept().on('exec', (take) => {
            const channel = take();
            channel.exit(0);
            channel.end('heard\n');
          }),
        ),
      );
    });
    const ws = new WebSocket(`${world.server.url.replace('http', 'ws')}/agent/connection`, {
      headers: {
        authorization: `Bearer ${reg.body.token}`,
        ...tunnelHeaders(reg.body.uid, hostKey.privateKey),
      },
      perMessageDeflate: false,
      maxPayload: TUNNEL_MAX_MESSAGE,
    });
    sockets.push(ws);
    await once(ws, 'open');
    serveTunnel(ws, {
      onStream: async (header, stream: Duplex) => {
        if (header.kind !== 'ssh') throw new Error('ssh only');
        sshEnd.injectSocket(stream as unknown as Parameters<typeof sshEnd.injectSocket>[0]);
      },
    });
    await world.waitOnline(reg.body.uid);

    // Signed in: the session reached the device's end (which answers every command with one line).
    const res = await world.sshKey(key.file, ['true'], world.target('root', 'listener'));
    expect(res.stdout.toString(), res.stderr).to.equal('heard\n');
    expect(heard).to.have.length(1);
    const [{ asked }] = heard as [Heard];
    expect(asked.other.status, 'another device asking').to.equal(403);
    expect(asked.own.status, 'the device signed in to').to.equal(200);
    expect(asked.again.status, 'the same blob again').to.equal(403);

    // Replayed later, by either device, the blob gets nothing either.
    const [{ blob }] = heard as [Heard];
    expect((await askToSign(reg.body.token, blob)).status).to.equal(403);
    expect((await askToSign(other.token, blob)).status).to.equal(403);
  });
});

function sshString(text: string): Buffer {
  const bytes = Buffer.from(text);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(bytes.length);
  return Buffer.concat([len, bytes]);
}
