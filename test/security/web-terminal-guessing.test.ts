import { request } from 'node:http';
import { expect } from 'chai';
import { DEVICE_PASSWORD, GatewayWorld } from '../integration/ssh/gateway-world';
import { startServer } from '../support/server';
import { WebTerminalClient } from '../support/web-terminal-client';

/** How one web-terminal attempt ended. */
interface Outcome {
  /** The password reached the device and was refused. */
  guessed: boolean;
  /** The socket opened and the password was given (whatever the answer): one more guess for the attacker. */
  reached: boolean;
  /** A shell opened. */
  shell: boolean;
  /** The socket was refused before the upgrade (429 for a penalised source). */
  httpStatus?: number;
  message?: string;
}

/**
 * The web terminal was a password oracle: each ticket allowed one attempt, any member could get tickets, and none
 * of the SSH gateway's penalties applied to `/ws/ssh`, so a member could try about 150 passwords a second on a
 * device account and then open a shell with the right one. Now a wrong password there earns the same penalties,
 * against its source and its target, as through the SSH gateway, in the cache the instances share; and a user
 * gets a limited number of tickets a minute.
 */
describe('security: guessing a device password through the web terminal', function () {
  this.timeout(180_000);
  let world: GatewayWorld;

  before(async () => {
    world = await GatewayWorld.start({
      deviceName: 'guessed',
      overrides: {
        ssh: {
          // Refused beyond 12 s of penalty, 10 s a failure: the second failure from one source refuses it.
          penalties: {
            authFail: 10,
            preAuthTimeout: 10,
            min: 12,
            max: 60,
            exempt: [],
            // And a device account beyond 22 s: two failures on it (20 s at most) never pause it, three do.
            targetAuthFail: 10,
            targetMin: 22,
          },
          terminalTicketsPerMinute: 40,
        },
      },
    });
  });
  after(async () => {
    await world?.stop();
  });

  const ticket = async (token = world.owner.token, target = world.target()) => {
    const res = await world.server.api('POST', '/api/terminal/tickets', { token, body: { target } });
    return res;
  };
  /** One attempt with `password` from `from`, as the console makes it: a ticket, the socket, the auth frame. */
  const attempt = async (password: string, from: string, target = world.target()): Promise<Outcome> => {
    const res = await ticket(world.owner.token, target);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const url = `${world.server.url.replace('http', 'ws')}/ws/ssh?ticket=${res.body.ticket}`;
    const client = new WebTerminalClient(url, from);
    const opened = await Promise.race([client.opened.then(() => true), client.closed.then(() => false)]);
    if (!opened) {
      return {
        guessed: false,
        reached: false,
        shell: false,
        httpStatus: client.httpStatus,
        message: JSON.parse(client.httpBody || '{}').message,
      };
    }
    client.control({ type: 'auth', password });
    const shell = await Promise.race([
      client.waitFor(/[#$] $/, 30_000).then(() => true),
      client.closed.then(() => false),
    ]);
    if (shell) {
      client.ws.close();
      await client.closed;
      return { guessed: false, reached: true, shell: true };
    }
    const message = client.controls.find((c) => c.type === 'error')?.message;
    return { guessed: message === 'wrong user name or password', reached: true, shell: false, message };
  };
  /** `POST /api/terminal/tickets` sent from the loopback address `from`: its status, Retry-After and body. */
  const ticketFrom = (from: string, server = world.server) =>
    new Promise<{ status: number; retryAfter: string | undefined; body: Record<string, unknown> }>(
      (resolve, reject) => {
        const { port } = new URL(server.url);
        const body = JSON.stringify({ target: world.target() });
        const req = request(
          {
            host: '127.0.0.1',
            port,
            path: '/api/terminal/tickets',
            method: 'POST',
            localAddress: from,
            headers: {
              authorization: `Bearer ${world.owner.token}`,
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(body),
            },
          },
          (res) => {
            let text = '';
            res.on('data', (chunk: Buffer) => {
              text += chunk.toString('utf8');
            });
            res.on('end', () =>
              resolve({
                status: res.statusCode ?? 0,
                retryAfter: res.headers['retry-after'],
                body: JSON.parse(text || '{}'),
              }),
            );
          },
        );
        req.on('error', reject);
        req.end(body);
      },
    );
  /** `ssh` from the loopback address `from` with the device password (or `password`), through the gateway. */
  const sshFrom = (from: string, target = world.target(), opts: { password?: string; port?: number } = {}) =>
    world.sshPassword(['true'], ['-b', from], target, { timeoutMs: 30_000, ...opts });

  it('gets a source as few guesses as the SSH gateway does, then refuses it there and on the gateway', async () => {
    // Twenty wrong passwords in a row from one source: before, each reached the device (about 150 a second);
    // now, as through the SSH gateway, the first is answered late, the second refuses the source, and the rest
    // are refused before any ticket is looked at.
    const started = Date.now();
    const outcomes: Outcome[] = [];
    for (let i = 0; i < 20; i++) outcomes.push(await attempt(`wrong-${i}`, '127.0.0.4'));
    const seconds = (Date.now() - started) / 1000;
    const reached = outcomes.filter((o) => o.reached).length;
    console.log(
      `      web terminal, one source: ${reached} of 20 passwords reached the device in ${seconds.toFixed(1)} s ` +
        `(${(reached / seconds).toFixed(2)} guesses a second)`,
    );
    expect(reached).to.equal(2);
    expect(outcomes[0]?.guessed).to.equal(true);
    expect(outcomes[1]?.message).to.match(
      /^too many failed sign-ins from 127\.0\.0\.4; try again in \d+ seconds$/,
    );
    for (const o of outcomes.slice(2)) {
      expect(o.httpStatus).to.equal(429);
      expect(o.message).to.match(/too many failed sign-ins from 127\.0\.0\.4/);
    }

    // Its browser gets no ticket meanwhile, and is told why (the console shows the message).
    const refusedTicket = await ticketFrom('127.0.0.4');
    expect(refusedTicket.status).to.equal(429);
    expect(Number(refusedTicket.retryAfter)).to.be.greaterThan(0);
    expect(refusedTicket.body.message).to.match(
      /^too many failed sign-ins from 127\.0\.0\.4; try again in \d+ seconds$/,
    );
    expect(refusedTicket.body).to.not.have.property('ticket');
    expect((await ticketFrom('127.0.0.8')).status).to.equal(200);

    // The right password from there opens nothing now, on the web terminal or through the SSH gateway.
    const right = await attempt(DEVICE_PASSWORD, '127.0.0.4');
    expect(right.shell).to.equal(false);
    expect(right.httpStatus).to.equal(429);
    const gateway = await sshFrom('127.0.0.4');
    expect(gateway.code).to.equal(255);
    expect(gateway.stderr).to.not.contain('Permission denied');
    // Another source is not held back.
    expect((await attempt(DEVICE_PASSWORD, '127.0.0.5')).shell).to.equal(true);
  });

  it('refuses on the web terminal a source the SSH gateway penalised', async () => {
    const first = await sshFrom('127.0.0.6', world.target('nobody'), { password: 'wrong' });
    expect(first.stderr).to.contain('Permission denied');
    const second = await sshFrom('127.0.0.6', world.target('nobody'), { password: 'wrong-again' });
    expect(second.stderr).to.match(/too many failed sign-ins from 127\.0\.0\.6/);
    const web = await attempt(DEVICE_PASSWORD, '127.0.0.6');
    expect(web).to.include({ shell: false, httpStatus: 429 });
  });

  it("pauses a device account's passwords once many sources failed on it, and a key still signs in", async () => {
    const target = world.target('operator');
    // Three sources, one wrong password each: none of them is refused, but the account is (30 s > 25 s).
    const paused = new RegExp(
      `^too many failed sign-ins to ${target.replace(/\./g, '\\.')} lately; its password sign-ins are paused ` +
        'for \\d+ seconds',
    );
    const tries = [];
    for (const from of ['127.0.0.21', '127.0.0.22', '127.0.0.23'])
      tries.push(await attempt('not-it', from, target));
    expect(tries.map((o) => o.reached)).to.deep.equal([true, true, true]);
    expect(tries[1]?.guessed).to.equal(true);
    expect(tries[2]?.message).to.match(paused);
    // Even the right password, from a fresh source, on the web terminal or through the SSH gateway.
    const web = await attempt(DEVICE_PASSWORD, '127.0.0.24', target);
    expect(web.shell).to.equal(false);
    expect(web.message).to.match(paused);
    const ssh = await sshFrom('127.0.0.25', target);
    expect(ssh.code).to.equal(255);
    expect(ssh.stderr).to.match(/password sign-ins are paused for \d+ seconds/);
    // Another account of the device is not held back, and a key of the namespace still signs in to this one.
    expect((await attempt(DEVICE_PASSWORD, '127.0.0.26', world.target('other'))).shell).to.equal(true);
    const key = await world.keyForEveryHost('paused-account');
    const byKey = await world.sshKey(key.file, ['echo', 'key-still-works'], target, ['-b', '127.0.0.27']);
    expect(byKey.code, byKey.stderr).to.equal(0);
    expect(byKey.stdout.toString()).to.equal('key-still-works\n');
  });

  it('refuses the source on every instance of the installation: the counts are in the shared cache', async function () {
    // Instances share a PostgreSQL database and a Redis; the embedded store lives inside one process.
    if (!process.env.TEST_DATABASE_URL || !process.env.TEST_REDIS_URL) return this.skip();
    // The installation's settings (each instance reads the same configuration).
    const other = await startServer({
      sharing: world.server,
      overrides: { ssh: { terminalTicketsPerMinute: 40 } },
    });
    try {
      for (const password of ['wrong-a', 'wrong-b']) await attempt(password, '127.0.0.9');
      // The second instance never saw a failure from there, and refuses it all the same.
      const refusedTicket = await ticketFrom('127.0.0.9', other);
      expect(refusedTicket.status).to.equal(429);
      const issued = await other.api('POST', '/api/terminal/tickets', {
        token: world.owner.token,
        body: { target: world.target() },
      });
      expect(issued.status, JSON.stringify(issued.body)).to.equal(200);
      const socket = new WebTerminalClient(
        `${other.url.replace('http', 'ws')}/ws/ssh?ticket=${issued.body.ticket}`,
        '127.0.0.9',
      );
      await socket.closed;
      expect(socket.httpStatus).to.equal(429);
      const ssh = await sshFrom('127.0.0.9', world.target(), { port: other.sshPort });
      expect(ssh.code).to.equal(255);
      expect(ssh.stderr).to.not.contain('Permission denied');
    } finally {
      await other.stop();
    }
  });

  it('gives a user a limited number of tickets a minute', async () => {
    const olive = await world.addMember('olive', 'observer');
    for (let i = 0; i < 40; i++) expect((await ticket(olive.token)).status).to.equal(200);
    const over = await ticket(olive.token);
    expect(over.status).to.equal(429);
    expect(over.headers.get('retry-after')).to.equal('60');
    expect(over.body.message).to.match(/at most 40 web terminals a minute/);
    expect(over.body).to.not.have.property('ticket');
    // Counted per user: the owner still gets one.
    expect((await ticket()).status).to.equal(200);
  });
});
