import { connect, type Socket } from 'node:net';
import { expect } from 'chai';
import ssh2 from 'ssh2';
import { DEVICE_PASSWORD, GatewayWorld } from '../integration/ssh/gateway-world';
import { agentAuthRequest } from '../support/device-keys';
import { startServer, type TestServer } from '../support/server';

/** A raw TCP connection to the gateway from `localAddress`; says what it heard and when it was closed. */
function rawConnection(port: number, localAddress = '127.0.0.1') {
  const socket: Socket = connect({ host: '127.0.0.1', port, localAddress });
  let heard = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => {
    heard += chunk;
  });
  socket.on('error', () => {});
  const opened = Date.now();
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - opened)));
  return {
    socket,
    closed,
    heard: () => heard,
    /** Whether the server closed it within `ms`. */
    closedWithin: (ms: number) =>
      Promise.race([closed.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]),
  };
}

/**
 * Pre-auth limits of the SSH gateway: the timeout runs from the TCP accept, unauthenticated connections
 * are capped per source and in total (OpenSSH MaxStartups), failed passwords slow and then refuse their source
 * (PerSourcePenalties), refused attempts do not fill the sessions table, and unauthenticated registrations of
 * devices are bounded.
 */
describe('security: the SSH gateway before sign-in', function () {
  this.timeout(180_000);

  describe('timeout and caps', () => {
    let server: TestServer;
    const open: ReturnType<typeof rawConnection>[] = [];
    before(async () => {
      server = await startServer({
        overrides: {
          ssh: {
            port: 0,
            host: '127.0.0.1',
            preAuthTimeout: 2,
            maxStartups: '4:100:4',
            perSourceMaxStartups: 2,
          },
        },
      });
    });
    after(async () => {
      for (const c of open) c.socket.destroy();
      await server?.stop();
    });

    it('drops a connection that never says anything, counted from the accept', async () => {
      const silent = rawConnection(server.sshPort, '127.0.0.9');
      open.push(silent);
      expect(await silent.closedWithin(10_000)).to.equal(true);
      expect(await silent.closed).to.be.at.least(1500);
      // One that sends its identification line and then nothing is dropped all the same.
      const ident = rawConnection(server.sshPort, '127.0.0.9');
      open.push(ident);
      ident.socket.write('SSH-2.0-OpenSSH_9.2\r\n');
      expect(await ident.closedWithin(10_000)).to.equal(true);
    });

    it('caps unauthenticated connections per source, and in total', async () => {
      const first = rawConnection(server.sshPort);
      const second = rawConnection(server.sshPort);
      open.push(first, second);
      await new Promise((r) => setTimeout(r, 300));
      const third = rawConnection(server.sshPort);
      open.push(third);
      // Refused at accept: closed at once, before the server's identification line.
      expect(await third.closedWithin(1000)).to.equal(true);
      expect(third.heard()).to.equal('');
      expect(first.heard()).to.match(/^SSH-2\.0-Gatehouse/);

      // Another source still gets in, up to the total of 4.
      const other = [rawConnection(server.sshPort, '127.0.0.2'), rawConnection(server.sshPort, '127.0.0.2')];
      open.push(...other);
      await new Promise((r) => setTimeout(r, 300));
      for (const c of other) expect(c.heard()).to.match(/^SSH-2\.0-Gatehouse/);
      const fifth = rawConnection(server.sshPort, '127.0.0.3');
      open.push(fifth);
      expect(await fifth.closedWithin(1000)).to.equal(true);
      expect(fifth.heard()).to.equal('');

      // Slots come back when connections go.
      first.socket.destroy();
      second.socket.destroy();
      await new Promise((r) => setTimeout(r, 200));
      const again = rawConnection(server.sshPort);
      open.push(again);
      await new Promise((r) => setTimeout(r, 300));
      expect(again.heard()).to.match(/^SSH-2\.0-Gatehouse/);
      const metrics = await fetch(`${server.kernel.internalUrl}/metrics`).then((r) => r.text());
      expect(metrics).to.match(/gatehouse_ssh_refused_total\{reason="per-source"\} 1/);
      expect(metrics).to.match(/gatehouse_ssh_refused_total\{reason="startups"\} 1/);
    });
  });

  describe('penalties and session rows', () => {
    let world: GatewayWorld;
    before(async () => {
      world = await GatewayWorld.start({
        deviceName: 'guarded',
        overrides: {
          ssh: {
            port: 0,
            host: '127.0.0.1',
            penalties: { authFail: 10, preAuthTimeout: 10, min: 12, max: 60, exempt: ['127.0.0.5'] },
            refusedSessionsPerMinute: 3,
          },
        },
      });
    });
    after(async () => {
      await world?.stop();
    });

    const tryPassword = (password: string, from = '127.0.0.1', target = world.target()) =>
      world.run(
        'ssh',
        [
          ...world.sshOptions(),
          ...world.passwordOptions(),
          '-b',
          from,
          '-p',
          String(world.server.sshPort),
          `${target}@127.0.0.1`,
          'true',
        ],
        { password, timeoutMs: 30_000 },
      );
    const rowsOf = async (uid: string) =>
      (
        await world.server.kernel.container.cradle.db('sessions').where({ device_uid: uid }).count({ n: '*' })
      )[0]?.n;

    it('slows failed passwords from a source, then refuses the source, and only that source', async () => {
      // 10 s of penalty per failure, refused beyond 12 s: the first failure is answered late (10 s / 5 = 2 s),
      // the second brings the source past the minimum.
      const started = Date.now();
      const first = await tryPassword('wrong-1', '127.0.0.4');
      expect(first.stderr).to.contain('Permission denied');
      expect(Date.now() - started).to.be.at.least(1500);
      const second = await tryPassword('wrong-2', '127.0.0.4');
      expect(second.code).to.equal(255);
      expect(second.stderr).to.match(/too many failed sign-ins from 127\.0\.0\.4; try again in \d+ seconds/);
      // Now even the right password from there is refused at accept; from elsewhere it works.
      const blocked = await tryPassword(DEVICE_PASSWORD, '127.0.0.4');
      expect(blocked.code).to.equal(255);
      expect(blocked.stderr).to.not.contain('Permission denied');
      expect((await tryPassword(DEVICE_PASSWORD, '127.0.0.1')).code).to.equal(0);
      const metrics = await fetch(`${world.server.kernel.internalUrl}/metrics`).then((r) => r.text());
      expect(metrics).to.match(/gatehouse_ssh_refused_total\{reason="penalty"\} [1-9]/);
    });

    it('never penalises an exempt source', async () => {
      for (let i = 0; i < 4; i++)
        expect((await tryPassword(`nope-${i}`, '127.0.0.5')).stderr).to.contain('Permission denied');
      expect((await tryPassword(DEVICE_PASSWORD, '127.0.0.5')).code).to.equal(0);
    });

    it('keeps refused attempts as sessions up to the per-minute budget, and none for connections that try nothing', async () => {
      const pending = world.startAgent('newcomer', '02:00:00:00:01:07');
      // With a key of the namespace, so the user signs in and is told why (and earns no penalty for it).
      const key = await world.keyForEveryHost('preauth');
      try {
        const uid = await world.waitForDevice('pending', 'newcomer');
        for (let i = 0; i < 8; i++) {
          const res = await world.sshKey(key.file, ['true'], world.target('root', 'newcomer'), [
            '-b',
            '127.0.0.6',
          ]);
          expect(res.stderr).to.contain('is waiting to be accepted');
        }
        await new Promise((r) => setTimeout(r, 500));
        expect(Number(await rowsOf(uid))).to.equal(3);
      } finally {
        await pending.stop();
      }

      // Connections to a reachable device that offer no password or key leave no session row.
      const before = Number(await rowsOf(world.deviceUid));
      for (let i = 0; i < 5; i++) {
        await new Promise<void>((resolve) => {
          const client = new ssh2.Client();
          client.on('error', () => resolve());
          client.on('close', () => resolve());
          client.connect({ host: '127.0.0.1', port: world.server.sshPort, username: world.target() });
        });
      }
      await new Promise((r) => setTimeout(r, 500));
      expect(Number(await rowsOf(world.deviceUid))).to.equal(before);
    });
  });

  describe('device registrations', () => {
    let server: TestServer;
    let tenant: string;
    let token: string;
    before(async () => {
      server = await startServer({
        ssh: false,
        overrides: {
          http: { port: 0, host: '127.0.0.1', trustProxy: true },
          limits: { maxDevices: -1, maxNamespaces: -1, pendingDevices: 6, registrationsPerMinute: 3 },
        },
      });
      const owner = await server.setup();
      tenant = owner.tenant;
      token = owner.token;
    });
    after(async () => server?.stop());

    let n = 0;
    const register = (from: string, label = `reg-${++n}`) => {
      const req = agentAuthRequest({
        tenant,
        hostname: label,
        mac: `02:00:00:00:77:${String(n).padStart(2, '0')}`,
        keyLabel: label,
      });
      return server.api('POST', '/api/devices/auth', {
        ...req,
        headers: { ...req.headers, 'x-forwarded-for': from },
      });
    };

    it('limits new devices per source and minute, never the availability calls of known ones', async () => {
      const known = [];
      for (let i = 0; i < 3; i++) {
        const res = await register('198.51.100.7', `src-${i}`);
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        known.push(`src-${i}`);
      }
      const fourth = await register('198.51.100.7');
      expect(fourth.status).to.equal(429);
      expect(fourth.body.message).to.match(/at most 3 a minute/);
      expect(fourth.headers.get('retry-after')).to.equal('60');
      expect(fourth.body).to.not.have.property('token');
      // The devices already known keep answering their availability calls from that same source.
      n -= 1;
      const again = await register('198.51.100.7', 'src-0');
      expect(again.status).to.equal(200);
      // Another source is not held back.
      expect((await register('198.51.100.8')).status).to.equal(200);
    });

    it('keeps at most limits.pendingDevices pending in a namespace, even under parallel registrations', async () => {
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) => register(`203.0.113.${i + 1}`, `flood-${i}`)),
      );
      const pending = await server.api('GET', '/api/devices?status=pending&per_page=100', { token });
      expect(pending.body.length).to.equal(6);
      const refused = results.filter((r) => r.status === 429);
      expect(refused.length).to.be.greaterThan(0);
      expect(refused[0]?.body.message).to.match(/already has 6 pending devices/);
      // Deciding on one makes room for one more.
      await server.api('PATCH', `/api/devices/${pending.body[0].uid}/reject`, { token });
      expect((await register('203.0.113.200', 'after-room')).status).to.equal(200);
      expect((await register('203.0.113.201', 'no-room')).status).to.equal(429);
    });
  });
});
