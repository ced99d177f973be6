import { expect } from 'chai';
import { startServer, type TestServer } from '../../support/server';
import { addMember, otherNamespace } from '../../support/tenants';
import { Terminal } from '../../support/terminal';
import { GatewayWorld } from './gateway-world';

const shared = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL);

interface LiveMessage {
  type: string;
  data?: string;
  names?: string[];
  width?: number;
  height?: number;
}

/** A `GET /api/sessions/:uid/live` stream being read: its status, and the messages so far. */
class Watch {
  readonly messages: LiveMessage[] = [];
  status = 0;
  ended = false;
  private readonly abort = new AbortController();

  static async open(server: TestServer, uid: string, token: string): Promise<Watch> {
    const watch = new Watch();
    const response = await fetch(`${server.url}/api/sessions/${uid}/live`, {
      headers: { authorization: `Bearer ${token}` },
      signal: watch.abort.signal,
    });
    watch.status = response.status;
    if (response.status === 200 && response.body) void watch.read(response.body);
    else await response.body?.cancel();
    return watch;
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of body) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const data = /^data: (.*)$/m.exec(buffer.slice(0, end))?.[1];
          buffer = buffer.slice(end + 2);
          if (data) this.messages.push(JSON.parse(data) as LiveMessage);
        }
      }
    } catch {
      // Aborted by close().
    }
    this.ended = true;
  }

  /** The terminal output so far, decoded. */
  get screen(): string {
    return this.messages
      .filter((m) => m.type === 'out')
      .map((m) => Buffer.from(m.data ?? '', 'base64').toString('utf8'))
      .join('');
  }

  get watchers(): string[] | undefined {
    return this.messages.filter((m) => m.type === 'watchers').at(-1)?.names;
  }

  close(): void {
    this.abort.abort();
  }
}

async function eventually(
  check: () => boolean | Promise<boolean>,
  label: string,
  ms = 10_000,
): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${label}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe(`watching a live session over ssh${shared ? ', from a second server' : ' (one server: no TEST_DATABASE_URL and TEST_REDIS_URL)'}`, function () {
  this.timeout(90_000);
  let world: GatewayWorld;
  let other: TestServer | undefined;
  /** Where the watchers connect: another instance than the session's gateway when the store is shared. */
  let watchVia: TestServer;
  let keyFile: string;

  before(async () => {
    world = await GatewayWorld.start({ deviceName: 'watched-device' });
    other = shared ? await startServer({ sharing: world.server }) : undefined;
    watchVia = other ?? world.server;
    keyFile = (await world.keyForEveryHost('watch')).file;
    const settings = await world.api('PUT', `/api/namespaces/${world.owner.tenant}`, {
      settings: { session_record: true },
    });
    expect(settings.status, JSON.stringify(settings.body)).to.equal(200);
  });
  after(async () => {
    await other?.stop();
    await world?.stop();
  });

  const shell = () =>
    new Terminal(
      [
        ...world.sshOptions(),
        ...world.keyOptions(keyFile),
        '-o',
        'LogLevel=ERROR',
        '-tt',
        '-p',
        String(world.server.sshPort),
        `${world.target()}@127.0.0.1`,
      ],
      { cols: 90, rows: 24 },
    );

  async function liveSession(): Promise<string> {
    let uid: string | undefined;
    await eventually(async () => {
      const list = await world.api('GET', '/api/sessions?active=true&per_page=100');
      uid = list.body.find(
        (s: { authenticated: boolean; recorded: boolean }) => s.authenticated && s.recorded,
      )?.uid;
      return uid !== undefined;
    }, 'the live recorded session');
    return uid as string;
  }

  it('shows the recording so far, then the output as it passes, and tells the person at the client', async () => {
    const term = shell();
    await term.waitFor(/[#$] $/);
    term.type('echo before-$((40 + 2))\r');
    await term.waitFor(/before-42/);
    const uid = await liveSession();
    const observer = await addMember(world.server, world.owner, 'watching-observer', 'observer');

    const watch = await Watch.open(watchVia, uid, observer.token);
    expect(watch.status).to.equal(200);
    // The recording so far comes first: the watcher sees what the person saw before it arrived.
    await eventually(() => watch.screen.includes('before-42'), 'the history on the watcher');
    await eventually(() => watch.watchers?.includes('watching-observer') ?? false, 'the watchers list');
    // The person at the client reads who watches (on standard error, between the shell's output).
    await term.waitFor(/gatehouse: watching-observer is watching this session/);

    const at = term.output.length;
    term.type('echo after-$((50 + 5))\r');
    await term.waitFor(/after-55/, at);
    await eventually(() => watch.screen.includes('after-55'), 'the live output on the watcher');
    // Each byte once: the history and the live output do not overlap.
    expect(watch.screen.split('before-42').length - 1, watch.screen).to.equal(
      term.output.split('before-42').length - 1,
    );

    // A second watcher joins: both see the other in the list.
    const second = await Watch.open(world.server, uid, world.owner.token);
    expect(second.status).to.equal(200);
    await eventually(() => (second.watchers?.length ?? 0) === 2, 'two watchers on the second');
    await eventually(() => (watch.watchers?.length ?? 0) === 2, 'two watchers on the first');
    expect(second.screen).to.contain('after-55');

    const beforeLeave = term.output.length;
    watch.close();
    await term.waitFor(/gatehouse: watching-observer stopped watching this session/, beforeLeave);
    await eventually(
      () => JSON.stringify(second.watchers) === JSON.stringify([world.owner.user]),
      'one left',
    );

    term.type('exit\r');
    expect(await term.exited).to.equal(0);
    // The session's end reaches whoever still watches, and the stream closes.
    await eventually(() => second.messages.some((m) => m.type === 'end') && second.ended, 'the end');
    // An ended session is played, not watched.
    expect((await Watch.open(watchVia, uid, world.owner.token)).status).to.equal(422);
  });

  it('lets no other namespace watch, and refuses a session that is not recorded', async () => {
    const term = shell();
    await term.waitFor(/[#$] $/);
    const uid = await liveSession();
    try {
      const elsewhere = await otherNamespace(world.server, world.owner, 'watch-elsewhere');
      expect((await Watch.open(watchVia, uid, elsewhere.token)).status).to.equal(404);
      expect((await Watch.open(watchVia, 'f'.repeat(64), world.owner.token)).status).to.equal(404);
      const anonymous = await fetch(`${watchVia.url}/api/sessions/${uid}/live`);
      expect(anonymous.status).to.equal(401);
    } finally {
      term.type('exit\r');
      await term.exited;
    }
    const off = await world.api('PUT', `/api/namespaces/${world.owner.tenant}`, {
      settings: { session_record: false },
    });
    expect(off.status).to.equal(200);
    const unrecorded = shell();
    await unrecorded.waitFor(/[#$] $/);
    try {
      let uid2: string | undefined;
      await eventually(async () => {
        const list = await world.api('GET', '/api/sessions?active=true&per_page=100');
        uid2 = list.body.find((s: { authenticated: boolean }) => s.authenticated)?.uid;
        return uid2 !== undefined;
      }, 'the unrecorded session');
      expect((await Watch.open(watchVia, uid2 as string, world.owner.token)).status).to.equal(422);
    } finally {
      unrecorded.type('exit\r');
      await unrecorded.exited;
      await world.api('PUT', `/api/namespaces/${world.owner.tenant}`, { settings: { session_record: true } });
    }
  });
});
