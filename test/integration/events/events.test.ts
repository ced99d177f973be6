import { expect } from 'chai';
import { type LoginAnswer, startServer, type TestServer } from '../../support/server';
import { addMember, otherNamespace, registerDevice } from '../../support/tenants';

const shared = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL);

interface Heard {
  status: number;
  type: string | null;
  events: { event: string; data: Record<string, unknown> }[];
  text: string;
  /** True once the server ended the answer. */
  ended: boolean;
  close(): void;
}

/** Retries `check` (an assertion) until it passes, for up to 15 s. */
async function until(check: () => unknown): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      await check();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Opens `GET /api/events` and keeps what it hears until closed. */
async function listen(server: TestServer, token?: string): Promise<Heard> {
  const abort = new AbortController();
  const res = await fetch(`${server.url}/api/events`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
    signal: abort.signal,
  });
  const heard: Heard = {
    status: res.status,
    type: res.headers.get('content-type'),
    events: [],
    text: '',
    ended: false,
    close: () => abort.abort(),
  };
  if (res.status !== 200 || !res.body) {
    heard.text = await res.text();
    return heard;
  }
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  void (async () => {
    let buffer = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        heard.ended = true;
        return;
      }
      const chunk = decoder.decode(value, { stream: true });
      heard.text += chunk;
      buffer += chunk;
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = /^event: (.*)$/m.exec(frame)?.[1];
        const data = /^data: (.*)$/m.exec(frame)?.[1];
        if (event && data) heard.events.push({ event, data: JSON.parse(data) });
        end = buffer.indexOf('\n\n');
      }
    }
  })().catch(() => {});
  return heard;
}

describe('console event stream (GET /api/events)', function () {
  this.timeout(60_000);
  let server: TestServer;
  let me: LoginAnswer;
  let other: LoginAnswer;
  let n = 0;
  const open: Heard[] = [];

  const register = (on: TestServer, tenant: string) => {
    n += 1;
    return registerDevice(on, {
      tenant,
      hostname: `live-${n}`,
      mac: `02:00:00:00:40:${n.toString(16).padStart(2, '0')}`,
      keyLabel: `live-key-${n}`,
    });
  };
  const stream = async (on: TestServer, token?: string) => {
    const heard = await listen(on, token);
    open.push(heard);
    return heard;
  };

  before(async () => {
    server = await startServer({
      overrides: { limits: { registrationsPerMinute: 1000, pendingPerSource: 1000, pendingPerBlock: 1000 } },
    });
    me = await server.setup();
    other = await otherNamespace(server, me);
  });
  afterEach(() => {
    for (const h of open.splice(0)) h.close();
  });
  after(async () => server?.stop());

  it('needs a signed-in caller', async () => {
    const heard = await stream(server);
    expect(heard.status).to.equal(401);
    const bad = await stream(server, 'not-a-token');
    expect(bad.status).to.equal(401);
  });

  it("carries its namespace's registrations and acceptances, and nothing of another namespace", async () => {
    const mine = await stream(server, me.token);
    const theirs = await stream(server, other.token);
    expect(mine.status).to.equal(200);
    expect(mine.type).to.match(/^text\/event-stream/);
    await until(() => expect(mine.text).to.contain(': connected'));
    await until(() => expect(theirs.text).to.contain(': connected'));

    const device = await register(server, me.tenant);
    await until(() =>
      expect(mine.events).to.deep.include({
        event: 'device.status',
        data: { kind: 'device.status', device: device.uid, status: 'pending' },
      }),
    );
    const accepted = await server.api('PATCH', `/api/devices/${device.uid}/accept`, { token: me.token });
    expect(accepted.status).to.equal(200);
    await until(() =>
      expect(mine.events.map((e) => e.data)).to.deep.include({
        kind: 'device.status',
        device: device.uid,
        status: 'accepted',
      }),
    );
    // The other namespace's stream heard of its own device, and of nothing in the first.
    const theirDevice = await register(server, other.tenant);
    await until(() => expect(theirs.events.map((e) => e.data.device)).to.include(theirDevice.uid));
    expect(theirs.text).not.to.contain(device.uid);
    expect(mine.text).not.to.contain(theirDevice.uid);
  });

  it('holds at most five streams per user; one more answers 429, and a closed one makes room', async () => {
    const five = [];
    for (let i = 0; i < 5; i += 1) five.push(await stream(server, me.token));
    expect(five.map((h) => h.status)).to.deep.equal([200, 200, 200, 200, 200]);
    const sixth = await stream(server, me.token);
    expect(sixth.status).to.equal(429);
    expect(sixth.text).to.contain('too many event streams');
    five[0]!.close();
    await until(async () => {
      const again = await stream(server, me.token);
      expect(again.status).to.equal(200);
    });
  });

  it('ends the stream of a member removed from the namespace at the next heartbeat, and keeps the others', async function () {
    this.timeout(90_000);
    const olive = await addMember(server, me, 'olive', 'observer');
    const hers = await stream(server, olive.token);
    const mine = await stream(server, me.token);
    expect(hers.status).to.equal(200);
    await until(() => expect(hers.text).to.contain(': connected'));
    const removed = await server.api('DELETE', `/api/namespaces/${me.tenant}/members/${olive.accountId}`, {
      token: me.token,
    });
    expect(removed.status, JSON.stringify(removed.body)).to.be.oneOf([200, 204]);
    // Within one heartbeat (15 s) and the check it makes, her stream ends; the owner's stays open.
    const deadline = Date.now() + 40_000;
    while (!hers.ended && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(hers.ended).to.equal(true);
    expect(mine.ended).to.equal(false);
    const device = await register(server, me.tenant);
    await until(() => expect(mine.events.map((e) => e.data.device)).to.include(device.uid));
    expect(hers.text).not.to.contain(device.uid);
  });

  describe('two servers sharing PostgreSQL and Redis (pending without TEST_DATABASE_URL and TEST_REDIS_URL)', () => {
    let second: TestServer;
    before(async function () {
      if (!shared) this.skip();
      second = await startServer({ sharing: server });
    });
    after(async () => second?.stop());

    it('a registration on one server reaches a console held on the other, and only its namespace', async () => {
      const onSecond = await stream(second, me.token);
      const theirsOnSecond = await stream(second, other.token);
      await until(() => expect(onSecond.text).to.contain(': connected'));
      const device = await register(server, me.tenant);
      await until(() =>
        expect(onSecond.events.map((e) => e.data)).to.deep.include({
          kind: 'device.status',
          device: device.uid,
          status: 'pending',
        }),
      );
      const removed = await server.api('DELETE', `/api/devices/${device.uid}`, { token: me.token });
      expect(removed.status).to.be.oneOf([200, 204]);
      await until(() =>
        expect(onSecond.events.map((e) => e.data)).to.deep.include({
          kind: 'device.status',
          device: device.uid,
          status: 'removed',
        }),
      );
      expect(theirsOnSecond.text).not.to.contain(device.uid);
    });
  });
});
