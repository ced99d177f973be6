import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { WebTerminalClient } from '../../support/web-terminal-client';
import { DEVICE_PASSWORD, GatewayWorld } from './gateway-world';

describe('the web terminal (GET /ws/ssh): a session of type web through the gateway', function () {
  this.timeout(90_000);
  let world: GatewayWorld;
  before(async () => {
    world = await GatewayWorld.start({ deviceName: 'web-device' });
  });
  after(async () => {
    await world?.stop();
  });

  const socketUrl = (query: Record<string, string>) =>
    `${world.server.url.replace('http', 'ws')}/ws/ssh?${new URLSearchParams({ cols: '90', rows: '20', ...query })}`;
  const ticketFor = async (token: string, target: string) => {
    const res = await world.server.api('POST', '/api/terminal/tickets', { token, body: { target } });
    return res;
  };
  /** What the console does: trade the token for a ticket, then open the socket with the ticket. */
  const url = async (token: string, target: string) => {
    const res = await ticketFor(token, target);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return socketUrl({ ticket: res.body.ticket });
  };

  it('signs in with the device password, runs commands, resizes and reports the exit status', async () => {
    const client = new WebTerminalClient(await url(world.owner.token, world.target()));
    await client.opened;
    client.control({ type: 'auth', password: DEVICE_PASSWORD });
    await client.waitFor(/[#$] $/);
    client.type('stty size\r');
    await client.waitFor(/20 90\r\n/);
    client.control({ type: 'resize', cols: 132, rows: 43 });
    await new Promise((r) => setTimeout(r, 200));
    client.type('stty size\r');
    await client.waitFor(/43 132\r\n/);
    client.type('exit 3\r');
    const closed = await client.closed;
    expect(closed.code).to.equal(1000);
    expect(client.controls).to.deep.include({ type: 'exit', code: 3 });

    // The journal writes in batches a quarter second apart, so the exit event reaches the store just after the
    // socket closes: read until it is there, then check the whole record.
    type Listed = { type: string; events: { types: string[]; items: { type: string; data: unknown }[] } };
    let web: Listed | undefined;
    const deadline = Date.now() + 10_000;
    while (!web?.events.types.includes('exit-status') && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      const sessions = await world.api('GET', '/api/sessions?per_page=100');
      web = (sessions.body as Listed[]).find((s) => s.type === 'web');
    }
    expect(web).to.include({ type: 'web', authenticated: true, username: 'root', term: 'xterm-256color' });
    expect(web?.events.types).to.include.members(['pty-req', 'shell', 'window-change', 'exit-status']);
    // One shape for an exit, whichever way the session came: {code} as SSH sessions write it.
    const exit = web?.events.items.find((e) => e.type === 'exit-status');
    expect(exit?.data).to.deep.equal({ code: 3 });
  });

  it('holds the device while the browser does not read, and loses nothing when it reads again', async () => {
    const client = new WebTerminalClient(await url(world.owner.token, world.target()));
    await client.opened;
    client.control({ type: 'auth', password: DEVICE_PASSWORD });
    await client.waitFor(/[#$] $/);
    let xs = 0;
    client.ws.on('message', (data: Buffer, binary: boolean) => {
      if (binary) for (const byte of data) if (byte === 0x78) xs++;
    });
    // The browser stops reading (a stalled tab, a slow link): its socket is no longer read.
    const socket = (client.ws as unknown as { _socket: import('node:net').Socket })._socket;
    socket.pause();
    const bytes = 48_000_000;
    const marker = path.join(world.dir, 'web-printed');
    const command = `head -c ${bytes} /dev/zero | tr '\\0' x; touch ${marker}; echo; echo DO""NE`;
    client.type(`${command}\r`);
    // Far less than the output fits in the sockets and channels between: a device that is held never finishes.
    await new Promise((r) => setTimeout(r, 3000));
    expect(existsSync(marker), 'the device finished printing while the browser read nothing').to.equal(false);
    socket.resume();
    await client.waitFor(/DONE\r\n/, 60_000);
    expect(existsSync(marker)).to.equal(true);
    // Every byte printed, and the x's of the command line the terminal echoed.
    expect(xs).to.equal(bytes + command.split('x').length - 1);
    client.type('exit\r');
    await client.closed;
  });

  it('answers a wrong password with an error frame, and a bad token with 401 before the upgrade', async () => {
    const client = new WebTerminalClient(await url(world.owner.token, world.target()), '127.0.0.32');
    await client.opened;
    client.control({ type: 'auth', password: 'wrong-password' });
    const closed = await client.closed;
    expect(closed.code).to.equal(4000);
    expect(client.controls).to.deep.include({ type: 'error', message: 'wrong user name or password' });

    const stranger = await ticketFor('not-a-token', world.target());
    expect(stranger.status).to.equal(401);
    const forged = new WebTerminalClient(socketUrl({ ticket: 'A'.repeat(43) }));
    await forged.closed;
    expect(forged.httpStatus).to.equal(401);
  });

  it('keeps the token out of the URL: a token there opens nothing, and a ticket opens one socket only', async () => {
    const withToken = new WebTerminalClient(socketUrl({ token: world.owner.token, target: world.target() }));
    await withToken.closed;
    expect(withToken.httpStatus).to.equal(401);

    const ticket = (await ticketFor(world.owner.token, world.target())).body.ticket as string;
    expect(ticket).to.match(/^[A-Za-z0-9_-]{43}$/);
    expect(ticket).to.not.include(world.owner.token.slice(0, 20));
    const first = new WebTerminalClient(socketUrl({ ticket }));
    await first.opened;
    const again = new WebTerminalClient(socketUrl({ ticket }));
    await again.closed;
    expect(again.httpStatus).to.equal(401);
    first.ws.close();
    await first.closed;
  });

  it('asks for a target and nothing else', async () => {
    const none = await world.server.api('POST', '/api/terminal/tickets', {
      token: world.owner.token,
      body: {},
    });
    expect(none.status).to.equal(400);
    expect(none.body).to.deep.equal(['target']);
    const extra = await world.server.api('POST', '/api/terminal/tickets', {
      token: world.owner.token,
      body: { target: world.target(), tenant: 'other' },
    });
    expect(extra.status).to.equal(400);
    expect(extra.body).to.deep.equal(['tenant']);
  });

  it('says an unknown device is unknown', async () => {
    const client = new WebTerminalClient(await url(world.owner.token, world.target('root', 'absent')));
    await client.opened;
    const closed = await client.closed;
    expect(closed.code).to.equal(4000);
    expect(client.controls[0]?.message).to.equal(
      `device "absent" not found in namespace "${world.namespace}"`,
    );
  });

  /** A key made by the real ssh-keygen, and what it signs with `ssh-keygen -Y sign` (an SSHSIG file). */
  const keygen = (name: string, type: 'ed25519' | 'ecdsa' | 'rsa') => {
    const file = path.join(world.dir, `web-${name}`);
    execFileSync('ssh-keygen', ['-q', '-t', type, '-N', '', '-C', name, '-f', file]);
    const line = readFileSync(`${file}.pub`, 'utf8').trim();
    return {
      line,
      data: Buffer.from(line).toString('base64'),
      /** The SSH signature blob inside `ssh-keygen -Y sign -n <namespace>`'s signature of `message`. */
      sign(message: Buffer, namespace = 'gatehouse-web-terminal'): string {
        const msg = `${file}.msg`;
        writeFileSync(msg, message);
        execFileSync('ssh-keygen', ['-q', '-Y', 'sign', '-f', file, '-n', namespace, msg]);
        const armored = readFileSync(`${msg}.sig`, 'utf8');
        const raw = Buffer.from(armored.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, ''), 'base64');
        // MAGIC "SSHSIG", uint32 version, then strings: public key, namespace, reserved, hash, signature.
        let at = 10;
        const strings: Buffer[] = [];
        for (let i = 0; i < 5; i++) {
          const len = raw.readUInt32BE(at);
          strings.push(raw.subarray(at + 4, at + 4 + len));
          at += 4 + len;
        }
        execFileSync('rm', ['-f', msg, `${msg}.sig`]);
        return (strings[4] as Buffer).toString('base64');
      },
    };
  };
  const register = async (name: string, data: string) => {
    const res = await world.api('POST', '/api/sshkeys/public-keys', {
      name,
      data,
      username: '.*',
      filter: { hostname: '.*' },
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
  };

  for (const type of ['ed25519', 'ecdsa', 'rsa'] as const) {
    it(`signs in with an ${type} key: the browser's side sends the public key and one signature, never the key`, async () => {
      const key = keygen(`key-${type}`, type);
      await register(`web-${type}`, key.data);
      const client = new WebTerminalClient(await url(world.owner.token, world.target()));
      await client.opened;
      client.control({ type: 'auth', method: 'publickey', key: key.line });
      const challenge = await client.nextControl('challenge');
      expect(challenge.namespace).to.equal('gatehouse-web-terminal');
      const nonce = Buffer.from(challenge.nonce ?? '', 'base64');
      expect(nonce).to.have.length(32);
      client.control({ type: 'signature', signature: key.sign(nonce) });
      await client.waitFor(/[#$] $/);
      client.type('echo key-$((20 + 22))\r');
      await client.waitFor(/key-42\r\n/);
      client.type('exit\r');
      expect((await client.closed).code).to.equal(1000);
    });
  }

  it('refuses a key the namespace does not list before asking for any signature', async () => {
    const stranger = keygen('stranger', 'ed25519');
    const client = new WebTerminalClient(await url(world.owner.token, world.target()));
    await client.opened;
    client.control({ type: 'auth', method: 'publickey', key: stranger.line });
    expect((await client.closed).code).to.equal(4000);
    expect(client.controls.map((c) => c.type)).to.deep.equal(['error']);
    expect(client.controls[0]?.message).to.match(
      /not among the namespace's public keys for root on web-device/,
    );
  });

  it('refuses a signature by another key, of another nonce, or in another namespace', async () => {
    const listed = keygen('listed', 'ed25519');
    await register('web-listed', listed.data);
    const other = keygen('other', 'ed25519');
    const attempts: ((nonce: Buffer) => string)[] = [
      (nonce) => other.sign(nonce),
      () => listed.sign(Buffer.alloc(32, 7)),
      (nonce) => listed.sign(nonce, 'file'),
      () => 'not a signature',
    ];
    // Each from a source of its own: four failures from one would refuse it, as through the SSH gateway.
    for (const [i, attempt] of attempts.entries()) {
      const client = new WebTerminalClient(await url(world.owner.token, world.target()), `127.0.0.${40 + i}`);
      await client.opened;
      client.control({ type: 'auth', method: 'publickey', key: listed.line });
      const challenge = await client.nextControl('challenge');
      client.control({ type: 'signature', signature: attempt(Buffer.from(challenge.nonce ?? '', 'base64')) });
      expect((await client.closed).code).to.equal(4000);
      expect(client.controls.at(-1)).to.deep.equal({
        type: 'error',
        message: 'the signature does not match the key',
      });
      expect(client.output).to.equal('');
    }
    const sessions = await world.api('GET', '/api/sessions?per_page=100');
    const refused = sessions.body.filter(
      (s: { type: string; authenticated: boolean; events: { types: string[] } }) =>
        s.type === 'web' && !s.authenticated && s.events.types.includes('auth-failed'),
    );
    expect(refused.length).to.be.at.least(attempts.length);
  });

  it("a disabled account's token cannot open /ws/ssh, nor can a ticket it got before", async () => {
    const bob = await world.addMember('bob', 'operator');
    expect(bob.tenant).to.equal(world.owner.tenant);
    const early = (await ticketFor(bob.token, world.target())).body.ticket as string;
    expect(early).to.be.a('string');

    const disabled = await world.api('PATCH', `/api/admin/users/${bob.accountId}`, { disabled: true });
    expect(disabled.status, JSON.stringify(disabled.body)).to.equal(200);
    expect((await ticketFor(bob.token, world.target())).status).to.equal(401);
    const stale = new WebTerminalClient(socketUrl({ ticket: early }));
    await stale.closed;
    expect(stale.httpStatus).to.equal(401);
  });

  // Last: it changes the owner's password (and signs the owner in again for anything after it).
  it('a token revoked by a password change cannot open /ws/ssh, nor can a ticket issued before the change', async () => {
    const old = world.owner.token;
    const early = (await ticketFor(old, world.target())).body.ticket as string;
    const changed = await world.server.api('PATCH', '/api/users', {
      token: old,
      body: { password: 'a-new-password-1', current_password: 'correct-horse' },
    });
    expect(changed.status, JSON.stringify(changed.body)).to.equal(200);

    expect((await world.server.api('GET', '/api/devices', { token: old })).status).to.equal(401);
    expect((await ticketFor(old, world.target())).status).to.equal(401);
    const stale = new WebTerminalClient(socketUrl({ ticket: early }));
    await stale.closed;
    expect(stale.httpStatus).to.equal(401);

    world.owner = await world.server.login(world.owner.user, 'a-new-password-1');
    const fresh = new WebTerminalClient(await url(world.owner.token, world.target()));
    await fresh.opened;
    fresh.control({ type: 'auth', password: DEVICE_PASSWORD });
    await fresh.waitFor(/[#$] $/);
    fresh.ws.close();
    await fresh.closed;
  });

  // After the others: it takes the database away for a moment.
  it('answers 503, not 401, when the store cannot say whether the ticket is still good', async function () {
    const databaseUrl = world.server.databaseUrl;
    if (!databaseUrl) return this.skip(); // the embedded store cannot be taken away from outside
    const name = new URL(databaseUrl).pathname.slice(1);
    const admin = async (sql: string, params: unknown[] = []) => {
      const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
      await client.connect();
      try {
        await client.query(sql, params);
      } finally {
        await client.end();
      }
    };
    const ticket = (await ticketFor(world.owner.token, world.target())).body.ticket as string;
    await admin(`alter database ${name} allow_connections false`);
    try {
      await admin('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [name]);
      const client = new WebTerminalClient(socketUrl({ ticket }));
      await client.closed;
      expect(client.httpStatus).to.equal(503);
    } finally {
      await admin(`alter database ${name} allow_connections true`);
    }
  });
});
