import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { Terminal } from '../../support/terminal';
import { GatewayWorld } from './gateway-world';

/** bash turns bracketed paste off after each line it reads: ESC [ ? 2004 l, then a carriage return. */
const PASTE_OFF = `${String.fromCharCode(27)}\\[\\?2004l\r`;

describe('ssh through the gateway: an interactive terminal, its announcement and its recording', function () {
  this.timeout(90_000);
  let world: GatewayWorld;
  let keyFile: string;
  const announcement = 'Welcome to the lab.\nChanges are recorded.';

  before(async () => {
    world = await GatewayWorld.start({ deviceName: 'term-device' });
    keyFile = (await world.keyForEveryHost('terminal')).file;
    const settings = await world.api('PUT', `/api/namespaces/${world.owner.tenant}`, {
      settings: { session_record: true, connection_announcement: announcement },
    });
    expect(settings.status, JSON.stringify(settings.body)).to.equal(200);
  });
  after(async () => {
    await world?.stop();
  });

  /** `ssh -tt` through the gateway with the registered key, then the remote command if any. */
  const ptyArgs = (...command: string[]) => [
    ...world.sshOptions(),
    ...world.keyOptions(keyFile),
    '-o',
    'LogLevel=ERROR',
    '-tt',
    '-p',
    String(world.server.sshPort),
    `${world.target()}@127.0.0.1`,
    ...command,
  ];

  it('shows the announcement, a prompt, echoes input, follows window changes, and records what was shown', async () => {
    const term = new Terminal(ptyArgs(), { cols: 100, rows: 30 });
    await term.waitFor(/Welcome to the lab\.\r\nChanges are recorded\.\r\n/);
    const afterBanner = term.output.indexOf('recorded.\r\n') + 'recorded.\r\n'.length;
    // The prompt, perhaps after bash's bracketed-paste switch.
    await term.waitFor(/[#$] $/, afterBanner);
    term.type('echo $((6 * 7))\r');
    await term.waitFor(new RegExp(`echo \\$\\(\\(6 \\* 7\\)\\)\r\n(?:${PASTE_OFF})?42\r\n`));
    term.type('stty size\r');
    await term.waitFor(new RegExp(`\r\n(?:${PASTE_OFF})?30 100\r\n`));
    term.resize(120, 40);
    await new Promise((r) => setTimeout(r, 300));
    term.type('stty size\r');
    await term.waitFor(new RegExp(`\r\n(?:${PASTE_OFF})?40 120\r\n`));
    term.type('exit\r');
    expect(await term.exited).to.equal(0);

    // The journal writes behind the data path: the session is complete once it is closed.
    let session: any;
    await waitUntil(async () => {
      const list = await world.api('GET', '/api/sessions?per_page=100');
      session = list.body.find(
        (s: { authenticated: boolean; recorded: boolean; active: boolean }) =>
          s.authenticated && s.recorded && !s.active,
      );
      return session !== undefined;
    });
    expect(session, 'a recorded session').to.exist;
    expect(session).to.include({ type: 'term', term: 'xterm', username: 'root', ip_address: '127.0.0.1' });
    expect(session.device_uid).to.equal(world.deviceUid);
    expect(session.events.types).to.include.members(['pty-req', 'shell', 'window-change', 'exit-status']);
    expect(session.events.seats).to.deep.equal([0]);
    const resize = session.events.items.find((e: { type: string }) => e.type === 'window-change');
    expect(resize.data).to.deep.equal({ cols: 120, rows: 40 });

    const records = await world.api('GET', `/api/sessions/${session.uid}/records/0`);
    expect(records.status).to.equal(200);
    const played = records.body.map((r: { message: string }) => r.message).join('');
    expect(played).to.contain('42\r\n');
    expect(played).to.contain('40 120');
    // What was recorded is exactly what the person saw after the announcement.
    expect(term.output.slice(afterBanner)).to.contain(played);
    expect(records.body[0]).to.include({ width: 100, height: 30, seat: 0, uid: session.uid });
    expect(
      records.body.some((r: { width: number; height: number }) => r.width === 120 && r.height === 40),
    ).to.equal(true);

    const cast = await world.server.api('GET', `/api/sessions/${session.uid}/records/0?format=asciicast`, {
      token: world.owner.token,
    });
    expect(cast.status).to.equal(200);
    expect(cast.headers.get('content-type')).to.match(/application\/x-asciicast/);
    const lines = String(cast.body)
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines[0]).to.include({ version: 2, width: 100, height: 30 });
    const events = lines.slice(1) as [number, string, string][];
    expect(events.map((e) => e[0])).to.deep.equal([...events.map((e) => e[0])].sort((a, b) => a - b));
    expect(
      events
        .filter((e) => e[1] === 'o')
        .map((e) => e[2])
        .join(''),
    ).to.equal(played);
    expect(events.some((e) => e[1] === 'r' && e[2] === '120x40')).to.equal(true);

    // The download plays in asciinema's own player, which prints the recorded output (resizes included in the file).
    const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-cast-'));
    try {
      const file = path.join(dir, 'session.cast');
      writeFileSync(file, String(cast.body));
      const play = spawnSync('asciinema', ['play', '--speed', '100', '--idle-time-limit', '0.01', file], {
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: 30_000,
      });
      expect(play.status, play.stderr.toString()).to.equal(0);
      expect(play.stdout.toString()).to.equal(played);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }

    const removed = await world.api('DELETE', `/api/sessions/${session.uid}/records/0`);
    expect(removed.status).to.equal(200);
    expect((await world.api('GET', `/api/sessions/${session.uid}/records/0`)).body).to.deep.equal([]);
  });

  it('keeps PTY output flowing after the person stops reading for a while', async () => {
    // The device produces output faster than it is read: backlogs build on the device's side of the tunnel and
    // must drain once reading starts again (a stall here once froze the session for good).
    const bytes = 24_000_000;
    const child = spawn('ssh', ptyArgs(`head -c ${bytes} /dev/zero | tr '\\0' x; echo; echo DONE`), {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let xs = 0;
    let tail = '';
    child.stdout.pause();
    child.stdout.on('data', (chunk: Buffer) => {
      for (const byte of chunk) if (byte === 0x78) xs++;
      tail = (tail + chunk.toString('latin1')).slice(-64);
    });
    setTimeout(() => child.stdout.resume(), 3000);
    const code = await new Promise<number | null>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`the session stalled after ${xs} of ${bytes} bytes`));
      }, 60_000);
      child.once('close', (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    expect(code).to.equal(0);
    expect(xs).to.equal(bytes);
    expect(tail).to.match(/DONE\r\n$/);
  });

  it('holds a recorded session while the store cannot take its output, and records all of it once it can', async () => {
    const bytes = 48_000_000;
    const child = spawn(
      'ssh',
      ptyArgs(`echo READY; sleep 2; head -c ${bytes} /dev/zero | tr '\\0' x; echo; echo DONE`),
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let xs = 0;
    let seen = '';
    child.stdout.on('data', (chunk: Buffer) => {
      for (const byte of chunk) if (byte === 0x78) xs++;
      seen = (seen + chunk.toString('latin1')).slice(-64);
    });
    const closed = new Promise<number | null>((resolve) => child.once('close', resolve));
    await waitUntil(async () => seen.includes('READY'), 30_000);
    // Signed in and recording: a transaction now holds a lock the recording's writes wait behind, as a store
    // stalled by a lock, a slow disk or a failover would. Without a bound the gateway kept all the output in memory
    // and passed it on regardless.
    const db = world.server.kernel.container.cradle.db;
    const trx = await db.transaction();
    let released = false;
    try {
      await trx.raw('lock table session_records in exclusive mode');
      // The output stops at the journal's bound (16 MiB) and what the channels and the tunnel hold beyond it.
      let last = -1;
      for (let i = 0; i < 80 && (xs === 0 || xs !== last); i++) {
        last = xs;
        await new Promise((r) => setTimeout(r, 500));
      }
      expect(xs, 'the output stopped while the store was locked').to.equal(last);
      // The journal took more than 16 MiB; up to the bridge's queue (2 MiB) of that may not have reached ssh yet.
      expect(xs).to.be.within(12 * 1024 * 1024, 32 * 1024 * 1024);
      await trx.commit();
      released = true;
      const code = await Promise.race([
        closed,
        new Promise<never>((_, reject) =>
          setTimeout(
            () => reject(new Error(`the session stayed held after ${xs} of ${bytes} bytes`)),
            60_000,
          ),
        ),
      ]);
      expect(code).to.equal(0);
      expect(xs).to.equal(bytes);
      expect(seen).to.match(/DONE\r\n$/);
    } finally {
      if (!released) await trx.rollback();
      child.kill();
    }
    // Every byte shown is in the recording once the session is closed.
    let recorded = 0;
    await waitUntil(async () => {
      const row = await db('session_records')
        .join('sessions', 'session_records.session_uid', 'sessions.uid')
        .whereNotNull('sessions.closed_at')
        .groupBy('sessions.uid')
        .select(db.raw(`sum(length(message) - length(replace(message, 'x', ''))) as x`))
        .orderBy('x', 'desc')
        .first();
      recorded = Number(row?.x ?? 0);
      return recorded >= bytes;
    }, 30_000);
    expect(recorded).to.equal(bytes);
  });
});

async function waitUntil(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error('condition never held');
    await new Promise((r) => setTimeout(r, 50));
  }
}
