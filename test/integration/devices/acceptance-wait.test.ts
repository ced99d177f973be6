import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { AgentProcess, eventually } from '../../support/agent-process';
import { agentAuthRequest } from '../../support/device-keys';
import { type LoginAnswer, startServer, type TestServer } from '../../support/server';

const shared = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL);

/**
 * A person who presses Accept and then Connect finds the device online. The pending agent holds
 * `GET /api/devices/auth/wait`; the acceptance answers it (on any instance), and the agent dials at once instead of
 * at its next availability call, up to 30 s later.
 */
describe('devices: online within seconds of acceptance', function () {
  this.timeout(60_000);
  let server: TestServer;
  let me: LoginAnswer;
  let keys: string;
  let n = 0;
  const agents: AgentProcess[] = [];

  const api = (method: string, p: string, body?: unknown) =>
    server.api(method, p, { token: me.token, ...(body === undefined ? {} : { body }) });

  /** Registers as an agent does and answers the device's uid and token. */
  const register = async (on: TestServer = server) => {
    n += 1;
    const res = await on.api(
      'POST',
      '/api/devices/auth',
      agentAuthRequest({
        tenant: me.tenant,
        hostname: `waiter-${n}`,
        mac: `02:00:00:00:30:${n.toString(16).padStart(2, '0')}`,
        keyLabel: `wait-key-${n}`,
      }),
    );
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body as { uid: string; token: string };
  };

  /** The wait call as the agent makes it; resolves with the status and how long the server held it. */
  const wait = async (on: TestServer, token: string, timeout: number | string) => {
    const started = Date.now();
    const res = await on.api('GET', `/api/devices/auth/wait?timeout=${timeout}`, { token });
    return { status: res.status, body: res.body, ms: Date.now() - started };
  };

  before(async () => {
    server = await startServer();
    me = await server.setup();
    keys = mkdtempSync(path.join(tmpdir(), 'gatehouse-accept-'));
  });
  after(async () => {
    await Promise.all(agents.map((a) => a.stop()));
    await server?.stop();
    rmSync(keys, { recursive: true, force: true });
  });

  it('brings a real agent with the default 30 s interval online within a few seconds of Accept', async () => {
    const agent = AgentProcess.device({
      server: server.url,
      tenant: me.tenant,
      keyPath: path.join(keys, 'real.key'),
      identity: '02:00:00:00:31:01',
      hostname: 'accept-me',
      keepalive: 30,
    });
    agents.push(agent);
    await agent.waitFor(/pending acceptance/);
    const uid = await agent.uid();
    // Let the agent reach its wait (it follows the refused tunnel at once).
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const accepted = Date.now();
    expect((await api('PATCH', `/api/devices/${uid}/accept`)).status).to.equal(200);
    await eventually(
      async () => ((await api('GET', `/api/devices/${uid}`)).body.online ? true : undefined),
      'device online',
      20_000,
    );
    const seconds = (Date.now() - accepted) / 1000;
    // Before, the agent came back at its next availability call: 24 to 36 s after the pending answer.
    expect(seconds, `online ${seconds} s after Accept`).to.be.below(10);
    expect(agent.lines.join('\n')).to.match(/device is accepted; connecting/);
    expect(agent.lines.join('\n')).to.not.match(/acceptance wait unavailable/);
  });

  it('answers at once when the device is not pending, and after the timeout while it is', async () => {
    const d = await register();
    const held = await wait(server, d.token, 1);
    expect(held.status).to.equal(200);
    expect(held.body).to.deep.equal({ status: 'pending' });
    expect(held.ms).to.be.at.least(900);

    expect((await api('PATCH', `/api/devices/${d.uid}/reject`)).status).to.equal(200);
    const rejected = await wait(server, d.token, 30);
    expect(rejected.body).to.deep.equal({ status: 'rejected' });
    expect(rejected.ms).to.be.below(5000);
  });

  it('wakes the wait when the device is accepted, rejected or removed', async () => {
    for (const [call, status] of [
      ['PATCH accept', 'accepted'],
      ['PATCH reject', 'rejected'],
      ['DELETE', 'removed'],
    ] as const) {
      const d = await register();
      const pending = wait(server, d.token, 30);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const [method, verb] = call.split(' ') as [string, string | undefined];
      const res = await api(method, verb ? `/api/devices/${d.uid}/${verb}` : `/api/devices/${d.uid}`);
      expect(res.status, call).to.equal(200);
      const answered = await pending;
      expect(answered.body, call).to.deep.equal({ status });
      expect(answered.ms, call).to.be.below(5000);
    }
  });

  it('refuses bad timeouts with 400 ["timeout"] and callers other than a device token', async () => {
    const d = await register();
    for (const bad of ['0', '56', 'abc', '1.5', '-3']) {
      const res = await wait(server, d.token, bad);
      expect(res.status, bad).to.equal(400);
      expect(res.body, bad).to.deep.equal(['timeout']);
    }
    expect((await server.api('GET', '/api/devices/auth/wait')).status).to.equal(401);
    const asUser = await server.api('GET', '/api/devices/auth/wait', { token: me.token });
    expect(asUser.status).to.be.oneOf([401, 403]);
  });

  it('answers held waits when the server stops, so stopping never waits for them', async () => {
    const other = await startServer();
    try {
      const owner = await other.setup();
      const res = await other.api(
        'POST',
        '/api/devices/auth',
        agentAuthRequest({
          tenant: owner.tenant,
          hostname: 'stopper',
          mac: '02:00:00:00:32:01',
          keyLabel: 'stop-key',
        }),
      );
      const held = wait(other, res.body.token, 55).catch((e: Error) => ({
        status: 0,
        body: e.message,
        ms: 0,
      }));
      await new Promise((resolve) => setTimeout(resolve, 300));
      const stopping = Date.now();
      await other.stop();
      const answer = await held;
      expect(Date.now() - stopping).to.be.below(8000);
      expect(answer.status).to.be.oneOf([0, 200]);
    } finally {
      await other.stop().catch(() => {});
    }
  });

  describe('with two servers sharing PostgreSQL and Redis (pending without TEST_DATABASE_URL and TEST_REDIS_URL)', () => {
    let second: TestServer;
    before(async function () {
      if (!shared) this.skip();
      second = await startServer({ sharing: server });
    });
    after(async () => second?.stop());

    it('answers a wait held on one server when the device is accepted on the other', async () => {
      const d = await register();
      const pending = wait(server, d.token, 30);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const res = await second.api('PATCH', `/api/devices/${d.uid}/accept`, { token: me.token });
      expect(res.status).to.equal(200);
      const answered = await pending;
      expect(answered.body).to.deep.equal({ status: 'accepted' });
      expect(answered.ms).to.be.below(5000);
    });
  });
});
