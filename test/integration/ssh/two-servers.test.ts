import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { request } from 'node:http';
import { expect } from 'chai';
import { WebSocket } from 'ws';
import { createCache } from '../../../core/cache';
import { startServer, type TestServer } from '../../support/server';
import { tunnelStreams } from '../../support/tunnels';
import { GatewayWorld } from './gateway-world';

const shared = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL);

/**
 * Two `gatehouse serve` instances of one installation share PostgreSQL and Redis (see docs/content/developers/architecture.md). The agent
 * and the user's SSH connection are on the first; the close call may land on the second.
 */
describe('two servers sharing PostgreSQL and Redis (pending without TEST_DATABASE_URL and TEST_REDIS_URL)', function () {
  this.timeout(90_000);
  let world: GatewayWorld;
  let other: TestServer;
  let keyFile: string;
  const children: ChildProcess[] = [];

  before(async function () {
    // Instances share a PostgreSQL database and a Redis; the embedded store lives inside one process.
    if (!shared) this.skip();
    world = await GatewayWorld.start({ deviceName: 'shared-device' });
    other = await startServer({ sharing: world.server });
    keyFile = (await world.keyForEveryHost('shared')).file;
  });
  after(async () => {
    for (const child of children) child.kill('SIGKILL');
    await other?.stop();
    await world?.stop();
  });

  it("reaches the device through the second server's gateway, its agent's tunnel being on the first", async () => {
    const viaOther = await world.run('ssh', [
      ...world.sshOptions(),
      ...world.keyOptions(keyFile),
      '-p',
      String(other.sshPort),
      `${world.target()}@127.0.0.1`,
      'echo through-$((40 + 2)); echo apart >&2; exit 3',
    ]);
    expect(viaOther.stderr, JSON.stringify(viaOther)).to.contain('apart');
    expect(viaOther.stdout.toString()).to.equal('through-42\n');
    expect(viaOther.code).to.equal(3);
    // A bulk transfer keeps its bytes across the extra hop.
    const payload = Buffer.alloc(4 * 1024 * 1024, 'gatehouse ');
    const counted = await world.run(
      'ssh',
      [
        ...world.sshOptions(),
        ...world.keyOptions(keyFile),
        '-p',
        String(other.sshPort),
        `${world.target()}@127.0.0.1`,
        'wc -c',
      ],
      { input: payload },
    );
    expect(counted.stdout.toString().trim()).to.equal(String(payload.length));
  });

  it('serves forwarded streams only to instances: not to user tokens, not without a token, not publicly', async () => {
    const answer = (base: string, token?: string) =>
      new Promise<number>((resolve, reject) => {
        const url = `${base.replace(/^http/, 'ws')}/internal/tunnel-stream?device=${world.deviceUid}`;
        const ws = new WebSocket(url, {
          headers: {
            ...(token ? { authorization: `Bearer ${token}` } : {}),
            'x-gatehouse-stream': JSON.stringify({ kind: 'ssh' }),
          },
        });
        ws.on('unexpected-response', (_req, res) => {
          resolve(res.statusCode ?? 0);
          ws.terminate();
        });
        ws.on('open', () => {
          ws.terminate();
          reject(new Error(`${url} opened a stream`));
        });
        ws.on('error', () => {});
      });
    const internal = world.server.kernel.internalUrl;
    expect(await answer(internal, world.owner.token)).to.equal(401);
    expect(await answer(internal)).to.equal(401);
    const tokens = world.server.kernel.container.cradle.tokens;
    const instance = await tokens.sign({ kind: 'instance', sub: 'test' }, 60);
    expect(await answer(world.server.url, instance)).to.equal(404);
  });

  it('opens no stream to the agent for an upgrade it cannot carry, and keeps none when the handshake fails', async () => {
    const streams = () =>
      tunnelStreams(world.server.kernel.container.cradle.tunnelHub, world.deviceUid).length;
    const before = streams();
    const tokens = world.server.kernel.container.cradle.tokens;
    const instance = await tokens.sign({ kind: 'instance', sub: 'test' }, 60);
    const status = (headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const req = request(
          new URL(`/internal/tunnel-stream?device=${world.deviceUid}`, world.server.kernel.internalUrl),
          {
            agent: false,
            headers: {
              authorization: `Bearer ${instance}`,
              connection: 'Upgrade',
              'x-gatehouse-stream': JSON.stringify({ kind: 'ssh' }),
              ...headers,
            },
          },
        );
        req.on('response', (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('upgrade', (_res, socket) => {
          socket.destroy();
          resolve(101);
        });
        req.on('error', reject);
        req.end();
      });
    expect(await status({ upgrade: 'h2c' })).to.equal(400);
    expect(streams()).to.equal(before);
    // A WebSocket upgrade ws refuses (no key): the stream opened for it goes with the socket.
    expect(await status({ upgrade: 'websocket', 'sec-websocket-version': '13' })).to.equal(400);
    for (let i = 0; i < 50 && streams() !== before; i++) await new Promise((r) => setTimeout(r, 20));
    expect(streams(), 'streams to the agent after the refused handshake').to.equal(before);
  });

  it('ends a session carried by the first server when the second answers the close call', async () => {
    const child = spawn(
      'ssh',
      [
        ...world.sshOptions(),
        ...world.keyOptions(keyFile),
        '-p',
        String(world.server.sshPort),
        `${world.target()}@127.0.0.1`,
        'sleep 60',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    children.push(child);
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const exited = once(child, 'exit');
    const viaOther = (method: string, p: string, body?: unknown) =>
      other.api(method, p, { token: world.owner.token, ...(body === undefined ? {} : { body }) });

    let live: { uid: string } | undefined;
    for (let i = 0; i < 100 && !live; i++) {
      const list = await viaOther('GET', '/api/sessions?per_page=100');
      expect(list.status).to.equal(200);
      live = list.body.find((s: { active: boolean; authenticated: boolean }) => s.active && s.authenticated);
      if (!live) await new Promise((r) => setTimeout(r, 100));
    }
    expect(live, 'the live session, as the second server lists it').to.exist;

    const closed = await viaOther('POST', `/api/sessions/${live?.uid}/close`, {
      device: world.deviceUid,
      reason: 'moving to the new rack',
    });
    expect(closed.status).to.equal(200);
    const timeout = new Promise((_, reject) =>
      setTimeout(
        () => reject(new Error('the ssh client was still connected 10 s after the close call')),
        10_000,
      ),
    );
    await Promise.race([exited, timeout]);
    // The notice crossed to the instance carrying the session, and the client printed it.
    expect(stderr).to.contain(`gatehouse: ${world.owner.user} closed this session: moving to the new rack`);
    for (const server of [world.server, other]) {
      const after = await server.api('GET', `/api/sessions/${live?.uid}`, { token: world.owner.token });
      expect(after.body.active, server.url).to.equal(false);
    }
  });

  it('keeps the messages of one installation from another sharing the same Redis', async () => {
    const url = process.env.TEST_REDIS_URL as string;
    const mine = createCache(url, world.server.redisPrefix);
    const theirs = createCache(url, `${world.server.redisPrefix}other:`);
    try {
      const heardMine: string[] = [];
      const heardTheirs: string[] = [];
      const stopMine = await mine.subscribe('probe', (m) => heardMine.push(m));
      const stopTheirs = await theirs.subscribe('probe', (m) => heardTheirs.push(m));
      await other.kernel.container.cradle.cache.publish('probe', 'hello');
      for (let i = 0; i < 50 && heardMine.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 100));
      expect(heardMine).to.deep.equal(['hello']);
      expect(heardTheirs).to.deep.equal([]);
      await stopMine();
      await stopTheirs();
    } finally {
      await mine.close();
      await theirs.close();
    }
  });
});
