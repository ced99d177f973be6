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

  const url = (token: string, target: string) =>
    `${world.server.url.replace('http', 'ws')}/ws/ssh?${new URLSearchParams({ token, target, cols: '90', rows: '20' })}`;

  it('signs in with the device password, runs commands, resizes and reports the exit status', async () => {
    const client = new WebTerminalClient(url(world.owner.token, world.target()));
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
    const client = new WebTerminalClient(url(world.owner.token, world.target()));
    await client.opened;
    client.control({ type: 'auth', password: 'wrong-password' });
    const closed = await client.closed;
    expect(closed.code).to.equal(4000);
    expect(client.controls).to.deep.include({ type: 'error', message: 'wrong user name or password' });

    const stranger = new WebTerminalClient(url('not-a-token', world.target()));
    await stranger.closed;
    expect(stranger.httpStatus).to.equal(401);
  });

  it('says an unknown device is unknown', async () => {
    const client = new WebTerminalClient(url(world.owner.token, world.target('root', 'absent')));
    await client.opened;
    const closed = await client.closed;
    expect(closed.code).to.equal(4000);
    expect(client.controls[0]?.message).to.equal(
      `device "absent" not found in namespace "${world.namespace}"`,
    );
  });
});
