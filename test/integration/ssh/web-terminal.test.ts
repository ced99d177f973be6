import { expect } from 'chai';
import { WebSocket } from 'ws';
import { DEVICE_PASSWORD, GatewayWorld } from './gateway-world';

/** A client of GET /ws/ssh as the console's terminal is: JSON control frames, binary terminal bytes. */
class WebTerminalClient {
  readonly ws: WebSocket;
  output = '';
  readonly controls: { type: string; message?: string; code?: number }[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  readonly opened: Promise<void>;
  httpStatus: number | undefined;

  constructor(url: string) {
    this.ws = new WebSocket(url);
    this.ws.on('message', (data: Buffer, binary: boolean) => {
      if (binary) this.output += data.toString('utf8');
      else this.controls.push(JSON.parse(data.toString('utf8')));
    });
    this.ws.on('unexpected-response', (_req, res) => {
      this.httpStatus = res.statusCode;
      this.ws.terminate();
    });
    this.ws.on('error', () => {});
    this.opened = new Promise((resolve) => this.ws.once('open', () => resolve()));
    this.closed = new Promise((resolve) =>
      this.ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
  }

  control(frame: object): void {
    this.ws.send(JSON.stringify(frame));
  }

  type(text: string): void {
    this.ws.send(Buffer.from(text), { binary: true });
  }

  async waitFor(pattern: RegExp, timeoutMs = 15_000): Promise<void> {
    const started = Date.now();
    while (!pattern.test(this.output)) {
      if (Date.now() - started > timeoutMs)
        throw new Error(`never saw ${pattern}; saw ${JSON.stringify(this.output)}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}

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

    const sessions = await world.api('GET', '/api/sessions?per_page=100');
    const web = sessions.body.find((s: { type: string }) => s.type === 'web');
    expect(web).to.include({ type: 'web', authenticated: true, username: 'root', term: 'xterm-256color' });
    expect(web.events.types).to.include.members(['pty-req', 'shell', 'window-change', 'exit-status']);
  });

  it('answers a wrong password with an error frame, and a bad token with 401 before the upgrade', async () => {
    const client = new WebTerminalClient(await url(world.owner.token, world.target()));
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
});
