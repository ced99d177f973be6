import { expect } from 'chai';
import { startServer, type TestServer } from '../../support/server';
import { addMember, otherNamespace } from '../../support/tenants';
import { Terminal } from '../../support/terminal';
import { GatewayWorld } from './gateway-world';

const shared = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL);

interface LiveMessage {
  type: string;
  reason?: string;
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

  static open(server: TestServer, uid: string, token: string): Promise<Watch> {
    return Watch.at(`${server.url}/api/sessions/${uid}/live`, { authorization: `Bearer ${token}` });
  }

  /** Through a share link, without an account. */
  static shared(server: TestServer, token: string): Promise<Watch> {
    return Watch.at(`${server.url}/api/shares/${token}/live`, {});
  }

  static async at(url: string, headers: Record<string, string>): Promise<Watch> {
    const watch = new Watch();
    const response = await fetch(url, { headers, signal: watch.abort.signal });
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
  it('shares a live session by a link that works without an account, until it is revoked', async () => {
    const setShares = async (on: boolean) => {
      const res = await world.api('PUT', `/api/namespaces/${world.owner.tenant}`, {
        settings: { session_share_links: on },
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.settings.session_share_links).to.equal(on);
    };
    const term = shell();
    let exited = false;
    void term.exited.then(() => {
      exited = true;
    });
    try {
      await term.waitFor(/[#$] $/);
      term.type('echo shared-$((30 + 3))\r');
      await term.waitFor(/shared-33/);
      const uid = await liveSession();
      const make = (token: string, body: unknown = {}) =>
        world.server.api('POST', `/api/sessions/${uid}/shares`, { token, body });

      // Off by default: a namespace chooses to let links out.
      const off = await world.api('GET', `/api/namespaces/${world.owner.tenant}`);
      expect(off.body.settings.session_share_links).to.equal(false);
      expect((await make(world.owner.token)).status).to.equal(403);
      await setShares(true);
      const operator = await addMember(world.server, world.owner, 'sharing-operator', 'operator');
      expect((await make(operator.token)).status, 'an operator makes no links').to.equal(403);
      for (const expires_in of [299, 86_401, 'soon'])
        expect((await make(world.owner.token, { expires_in })).status, String(expires_in)).to.equal(400);

      const made = await make(world.owner.token, { expires_in: 600 });
      expect(made.status, JSON.stringify(made.body)).to.equal(200);
      expect(made.headers.get('cache-control')).to.contain('no-store');
      const { token, url, id } = made.body as { token: string; url: string; id: string };
      // On the server's public address (GATEHOUSE_PUBLIC_URL), which the console serves the link's page on.
      expect(url).to.equal(`${world.server.kernel.container.cradle.config.publicUrl}/share/${token}`);
      const expiresIn = Date.parse(made.body.expires_at) - Date.now();
      expect(expiresIn).to.be.within(590_000, 600_000);
      // Kept as a hash only.
      const stored = await world.server.kernel.container.cradle.db('session_shares').where({ id }).first();
      expect(JSON.stringify(stored)).to.not.contain(token);

      const info = await fetch(`${watchVia.url}/api/shares/${token}`);
      expect(info.status).to.equal(200);
      expect(await info.json()).to.include({ device: 'watched-device', username: 'root', active: true });
      for (const wrong of ['x'.repeat(43), `${token.slice(0, -1)}A`, 'short'])
        expect((await fetch(`${watchVia.url}/api/shares/${wrong}`)).status, wrong).to.equal(404);

      const viewer = await Watch.shared(watchVia, token);
      expect(viewer.status).to.equal(200);
      await eventually(() => viewer.screen.includes('shared-33'), 'the history on the link');
      await term.waitFor(/gatehouse: someone with a share link is watching this session/);
      const at = term.output.length;
      term.type('echo through-link-$((4 * 4))\r');
      await term.waitFor(/through-link-16/, at);
      await eventually(() => viewer.screen.includes('through-link-16'), 'the live output on the link');

      // A viewer without an account is not told who of the namespace watches, only that a member does.
      const member = await Watch.open(watchVia, uid, world.owner.token);
      await eventually(
        () =>
          JSON.stringify(viewer.watchers) ===
          JSON.stringify(['someone with a share link', 'a member of the namespace']),
        'the names a link viewer is given',
      );
      await eventually(
        () => member.watchers?.includes(world.owner.user) ?? false,
        'the names a member is given',
      );
      member.close();
      // One link holds at most three streams on a server: the watchers of the session are not a link's to fill.
      const more = [await Watch.shared(watchVia, token), await Watch.shared(watchVia, token)];
      expect(more.map((w) => w.status)).to.deep.equal([200, 200]);
      expect((await Watch.shared(watchVia, token)).status).to.equal(429);
      for (const w of more) w.close();

      // Each use is counted on the link and kept with the session.
      const listed = await world.api('GET', `/api/sessions/${uid}/shares`);
      expect(listed.status).to.equal(200);
      expect(listed.body).to.have.length(1);
      expect(listed.body[0]).to.include({ id, uses: 3, active: true, created_by: world.owner.user });
      expect(listed.body[0]).to.not.have.property('token');
      const session = await world.api('GET', `/api/sessions/${uid}`);
      const viewed = session.body.events.items.find((e: { type: string }) => e.type === 'share-viewed');
      expect(viewed?.data).to.include({ share: id, ip: '127.0.0.1' });

      // Another namespace can neither list nor revoke it.
      const elsewhere = await otherNamespace(world.server, world.owner, 'share-elsewhere');
      const theirs = (method: string, p: string) => world.server.api(method, p, { token: elsewhere.token });
      expect((await theirs('GET', `/api/sessions/${uid}/shares`)).status).to.equal(404);
      expect((await theirs('DELETE', `/api/sessions/${uid}/shares/${id}`)).status).to.equal(404);
      expect((await theirs('POST', `/api/sessions/${uid}/shares`)).status).to.equal(404);

      // Revoked: the open stream ends at once with the reason, the person is told, the link opens nothing.
      const beforeRevoke = term.output.length;
      const revoked = await world.api('DELETE', `/api/sessions/${uid}/shares/${id}`);
      expect(revoked.status).to.equal(200);
      await eventually(
        () => viewer.ended && viewer.messages.some((m) => m.type === 'end' && m.reason === 'revoked'),
        'the revoked stream to end',
        5_000,
      );
      await term.waitFor(/someone with a share link stopped watching this session/, beforeRevoke);
      expect((await fetch(`${watchVia.url}/api/shares/${token}`)).status).to.equal(404);
      expect((await Watch.shared(watchVia, token)).status).to.equal(404);

      // Turning links off stops those not revoked too.
      const second = await make(world.owner.token);
      expect(second.status).to.equal(200);
      expect((await fetch(`${watchVia.url}/api/shares/${second.body.token}`)).status).to.equal(200);
      await setShares(false);
      expect((await fetch(`${watchVia.url}/api/shares/${second.body.token}`)).status).to.equal(404);
    } finally {
      if (!exited) term.type('exit\r');
      await term.exited;
    }
  });
});
