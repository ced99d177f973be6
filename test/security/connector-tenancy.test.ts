import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { STATUS } from '../../plugins/enterprise/connectors/engine';
import { createUser, switchTo } from '../integration/accounts/team';
import { baseSshOptions, run } from '../integration/agent/openssh-client';
import { connectEngine, connectorState, engineAddress, type RunningConnector } from '../support/connector';
import { type PodmanEngine, startPodman } from '../support/podman';
import { type LoginAnswer, startServer, type TestServer } from '../support/server';

type Api = (method: string, path: string, body?: unknown) => ReturnType<TestServer['api']>;

const until = async <T>(what: string, read: () => Promise<T>, check: (v: T) => boolean, ms = 20_000) => {
  const deadline = Date.now() + ms;
  let last = await read();
  while (!check(last)) {
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 100));
    last = await read();
  }
  return last;
};

const containers = async (api: Api, status: string) =>
  (await api('GET', `/api/containers?status=${status}&per_page=100`)).body as { uid: string; name: string }[];

/**
 * One namespace must never reach another's containers. A namespace used to name any engine address in a connector;
 * when another namespace's engine was at that address, its containers showed up pending in the first namespace,
 * and accepting one with the attacker's key gave a root shell in the victim's container. Now a connector's engine
 * is the one its own process beside the engine reaches, and a container belongs to one connector: the older.
 */
describe('security: connectors across namespaces (podman)', function () {
  this.timeout(180_000);
  let engine: PodmanEngine;
  let server: TestServer;
  let victim: LoginAnswer;
  let attackerToken: string;
  let attackerNamespace: string;
  let dir: string;
  const running: RunningConnector[] = [];
  const asVictim: Api = (method, p, body) => server.api(method, p, { token: victim.token, body });
  const asAttacker: Api = (method, p, body) => server.api(method, p, { token: attackerToken, body });

  before(async () => {
    engine = await startPodman();
    server = await startServer({
      edition: 'enterprise',
      overrides: { ssh: { penalties: { exempt: ['127.0.0.1'] } } },
    });
    victim = await server.setup();
    const mallory = await createUser(server, 'mallory');
    const ns = await server.api('POST', '/api/namespaces', {
      token: mallory.token,
      body: { name: 'mallory-ns' },
    });
    attackerNamespace = 'mallory-ns';
    attackerToken = await switchTo(server, mallory.token, ns.body.tenant_id);
    const c = await connectEngine(server, asVictim, engineAddress(engine));
    running.push(c);
    await connectorState(asVictim, c.uid, 'connected');
    await engine.runContainer('victim-box');
    const [box] = await until(
      'victim-box pending',
      () => containers(asVictim, 'pending'),
      (l) => l.some((x) => x.name === 'victim-box'),
    );
    expect((await asVictim('PATCH', `/api/containers/${box?.uid}/accept`)).status).to.equal(200);
    dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-connector-tenancy-'));
  });
  after(async () => {
    for (const c of running) await c.stop();
    await server?.stop();
    await engine?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a connector that names an engine address, and lists nothing of that engine', async () => {
    const named = await asAttacker('POST', '/api/connector', { address: engine.address, port: engine.port });
    expect(named.status, JSON.stringify(named.body)).to.equal(400);
    // Whatever the watchers do meanwhile, none of the victim's containers reaches the attacker.
    await new Promise((r) => setTimeout(r, 3000));
    for (const status of ['pending', 'accepted', 'rejected'])
      expect(await containers(asAttacker, status), status).to.deep.equal([]);
  });

  it('keeps an engine with its first connector when another namespace runs a connector beside it', async () => {
    const c = await connectEngine(server, asAttacker, engineAddress(engine));
    running.push(c);
    await connectorState(asAttacker, c.uid, 'disconnected', STATUS.taken);
    // A container that starts now goes to the engine's connector of old, never to the newer one.
    await engine.runContainer('victim-later');
    await until(
      'victim-later pending in the victim’s namespace',
      () => containers(asVictim, 'pending'),
      (l) => l.some((x) => x.name === 'victim-later'),
    );
    await new Promise((r) => setTimeout(r, 2000));
    for (const status of ['pending', 'accepted', 'rejected'])
      expect(await containers(asAttacker, status), status).to.deep.equal([]);
    const accepted = await containers(asVictim, 'accepted');
    expect(accepted.map((x) => x.name)).to.include('victim-box');
  });

  it('gives the attacker’s key no shell in the victim’s container', async () => {
    const keyFile = path.join(dir, 'id_ed25519');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', keyFile]);
    const line = readFileSync(`${keyFile}.pub`, 'utf8').trim();
    const added = await asAttacker('POST', '/api/sshkeys/public-keys', {
      data: Buffer.from(line).toString('base64'),
      filter: { hostname: '.*' },
      name: 'mallory-key',
      username: '.*',
    });
    expect(added.status, JSON.stringify(added.body)).to.equal(200);
    const victimNamespace = (await asVictim('GET', `/api/namespaces/${victim.tenant}`)).body.name as string;
    for (const target of [`root@${attackerNamespace}.victim-box`, `root@${victimNamespace}.victim-box`]) {
      const res = await run(
        'ssh',
        [
          ...baseSshOptions(server.sshPort),
          '-i',
          keyFile,
          '-o',
          'IdentitiesOnly=yes',
          '-o',
          'BatchMode=yes',
          `${target}@127.0.0.1`,
          'id -u',
        ],
        { timeoutMs: 30_000 },
      );
      expect(res.code, `${target}: ${res.stdout}${res.stderr}`).to.not.equal(0);
      expect(res.stdout).to.not.match(/^0$/m);
    }
  });
});

/** A TCP service on loopback that counts its connections and answers each with `answer` (or hangs up). */
async function listener(answer: ((socket: import('node:net').Socket) => void) | 'hang-up') {
  let connections = 0;
  const server: Server = createServer((socket) => {
    connections++;
    socket.on('error', () => {});
    if (answer === 'hang-up') socket.destroy();
    else answer(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const SECRET = 'internal-secret-7f3a';

/** An HTTP answer with a JSON body, whatever was asked. */
function httpJson(body: string) {
  return (socket: import('node:net').Socket) => {
    socket.once('data', () =>
      socket.end(
        `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `Connection: close\r\n\r\n${body}`,
      ),
    );
  };
}

for (const edition of ['enterprise', 'cloud'] as const) {
  /**
   * A connector pointed at any host:port used to return that service's body through `GET /api/connector/{uid}/info`,
   * and its status told ECONNREFUSED from a hang-up: the server was a proxy, and a port scanner, for any namespace
   * (in the cloud, for any new sign-up, on the server's own network). Now the server opens no connection to an
   * address a namespace names, passes on only an engine's answer, and says which part failed in its own words.
   */
  describe(`security: connectors are no proxy to places a namespace names (${edition})`, function () {
    this.timeout(120_000);
    let server: TestServer;
    let me: LoginAnswer;
    const running: RunningConnector[] = [];
    const closers: (() => Promise<void>)[] = [];
    const api: Api = (method, p, body) => server.api(method, p, { token: me.token, body });

    before(async () => {
      server = await startServer({ edition, ssh: false });
      me = await server.setup();
    });
    after(async () => {
      for (const c of running) await c.stop();
      for (const close of closers) await close();
      await server?.stop();
    });

    it('opens no connection to an address or port a namespace gives', async () => {
      const service = await listener(httpJson(`{"secret":"${SECRET}"}`));
      closers.push(service.close);
      const targets = [
        { address: '127.0.0.1', port: service.port },
        { address: 'localhost', port: service.port },
        { address: '169.254.169.254', port: 80 },
      ];
      for (const target of targets) {
        const res = await api('POST', '/api/connector', target);
        expect(res.status, JSON.stringify(target)).to.equal(400);
      }
      const made = await api('POST', '/api/connector', {});
      expect(made.status).to.equal(201);
      const patched = await api('PATCH', `/api/connector/${made.body.uid}`, targets[0]);
      expect(patched.status).to.equal(400);
      const info = await api('GET', `/api/connector/${made.body.uid}/info`);
      expect(info.status).to.equal(424);
      expect(info.body.message).to.equal(STATUS.offline);
      await new Promise((r) => setTimeout(r, 1000));
      expect(service.connections()).to.equal(0);
    });

    it('passes on no answer that is not a container engine’s', async () => {
      const service = await listener(httpJson(`{"secret":"${SECRET}","ServerVersion":1}`));
      closers.push(service.close);
      const c = await connectEngine(server, api, `tcp://127.0.0.1:${service.port}`);
      running.push(c);
      const status = await connectorState(api, c.uid, 'disconnected', STATUS.notEngine);
      const info = await api('GET', `/api/connector/${c.uid}/info`);
      expect(info.status).to.equal(424);
      expect(info.body.message).to.equal(STATUS.notEngine);
      const list = await api('GET', '/api/connector?per_page=100');
      expect(JSON.stringify([status, info.body, list.body])).to.not.contain(SECRET);
    });

    it('cuts an answer larger than an engine’s, and keeps serving', async () => {
      const huge = `{"ServerVersion":"1","ID":"x","Containers":0,"Images":0,"pad":"${'x'.repeat(40 * 1024 * 1024)}"}`;
      const service = await listener(httpJson(huge));
      closers.push(service.close);
      const c = await connectEngine(server, api, `tcp://127.0.0.1:${service.port}`, { enable: false });
      running.push(c);
      const info = await api('GET', `/api/connector/${c.uid}/info`);
      expect(info.status).to.equal(424);
      expect((await server.api('GET', '/info')).status).to.equal(200);
    });

    it('says which part failed from a short list, never the network’s own words', async () => {
      const hangUp = await listener('hang-up');
      closers.push(hangUp.close);
      const closed = await listener('hang-up');
      await closed.close();
      const known = Object.values(STATUS) as string[];
      for (const where of [`tcp://127.0.0.1:${hangUp.port}`, `tcp://127.0.0.1:${closed.port}`]) {
        const c = await connectEngine(server, api, where, { enable: false });
        running.push(c);
        const status = await connectorState(api, c.uid, 'disconnected');
        const info = await api('GET', `/api/connector/${c.uid}/info`);
        expect(info.status).to.equal(424);
        for (const message of [status.Message, info.body.message]) {
          expect(known, where).to.include(message);
          expect(message).to.not.match(/ECONN|EHOST|socket|hang up|127\.0\.0\.1|\d{4,5}/);
        }
      }
    });
  });
}
