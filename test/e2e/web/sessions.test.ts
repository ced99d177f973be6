import { expect } from 'chai';
import pg from 'pg';
import type { Page } from 'playwright-core';
import { eventually } from '../../support/agent-process';
import { expectAccessible } from './support/browser';
import { DEVICE_PASSWORD, DeviceWorld } from './support/device-world';
import { sshThroughGateway } from './support/ssh';

// Sessions as a person reads them after real connections through the gateway: why one was not recorded (no
// terminal, a failed sign-in, recording off), a recorded one's start, end, duration and events in words, and its
// playback with pause, a seek bar and a timeline, above the fold.

interface ApiSession {
  uid: string;
  active: boolean;
  authenticated: boolean;
  recorded: boolean;
  events: { types: string[] };
}

describe('web console: sessions say what is true, and play back with pause, seek and a timeline', function () {
  this.timeout(180_000);
  let world: DeviceWorld;
  let page: Page;
  let target: string;

  before(async () => {
    world = await DeviceWorld.start({ hostname: 'edge-rec' });
    page = world.page;
    target = `root@${world.auth.user}.edge-rec`;
  });
  after(async () => {
    await world?.stop();
  });

  const list = async () => (await (await world.api('/api/sessions?per_page=100')).json()) as ApiSession[];
  const allClosed = () =>
    eventually(
      async () => {
        const sessions = await list();
        return sessions.every((s) => !s.active) ? sessions : undefined;
      },
      'the sessions to close',
      20_000,
    );
  const setRecording = async (on: boolean) => {
    const res = await world.api(`/api/users/security/${world.auth.tenant}`, {
      method: 'PUT',
      body: JSON.stringify({ session_record: on }),
    });
    expect(res.status).to.equal(200);
  };
  const ssh = (opts: { tty?: boolean; input?: string; command?: string; password?: string }) =>
    sshThroughGateway({ port: world.server.sshPort, target, password: DEVICE_PASSWORD, ...opts });

  it('says why each session was not recorded: no terminal, a failed sign-in, or recording off', async () => {
    const exec = await ssh({ command: 'echo no-terminal-$((2 + 2))' });
    expect(exec.out).to.contain('no-terminal-4');
    const failed = await ssh({ command: 'true', password: 'not-the-password' });
    expect(failed.code).to.equal(255);
    await setRecording(false);
    try {
      const off = await ssh({ tty: true, input: 'echo off-$((3 + 3))\rexit\r' });
      expect(off.out).to.contain('off-6');
    } finally {
      await setRecording(true);
    }
    const sessions = await allClosed();
    const find = (test: (s: ApiSession) => boolean, what: string) => {
      const found = sessions.find(test);
      if (!found) throw new Error(`no ${what} session in ${JSON.stringify(sessions)}`);
      return found;
    };
    const noTerminal = find((s) => s.authenticated && s.events.types.includes('exec'), 'exec');
    const signInFailed = find((s) => !s.authenticated && s.events.types.includes('auth-failed'), 'failed');
    const recordingOff = find((s) => s.authenticated && s.events.types.includes('pty-req'), 'terminal');
    for (const s of [noTerminal, signInFailed, recordingOff]) expect(s.recorded).to.equal(false);

    await page.goto(`${world.server.url}/sessions`);
    const table = page.getByRole('table', { name: 'Sessions' });
    await table.getByText('No terminal').waitFor();
    await table.getByText('Sign-in failed').waitFor();
    await table.getByText('Recording off').waitFor();
    await expectAccessible(page, 'sessions');

    const says = async (uid: string, text: string | RegExp) => {
      await page.goto(`${world.server.url}/sessions/${uid}`);
      const alert = page.getByRole('status').filter({ hasText: 'Not recorded' });
      await alert.waitFor();
      const shown = (await alert.textContent()) ?? '';
      if (typeof text === 'string') expect(shown).to.contain(text);
      else expect(shown).to.match(text);
      // What it says is the reason, never the old blanket "recording was off" where it was on.
      return shown;
    };
    expect(await says(noTerminal.uid, 'The session had no terminal')).to.not.match(/recording was off/i);
    expect(await says(signInFailed.uid, 'The sign-in failed')).to.not.match(/recording was off/i);
    await page.getByText('Not signed in').waitFor();
    await says(recordingOff.uid, 'Session recording was off for this namespace');
    await expectAccessible(page, 'session details, not recorded');
  });

  it('shows a recorded session: start, end, duration, events in words, one exit status, the player above the fold', async () => {
    const before = new Set((await list()).map((s) => s.uid));
    await ssh({
      tty: true,
      input: 'echo one-$((0 + 1)); sleep 2; echo two-$((1 + 1)); sleep 2; echo three-$((1 + 2)); exit 3\r',
    });
    const sessions = await allClosed();
    const recorded = sessions.find((s) => !before.has(s.uid) && s.recorded);
    if (!recorded) throw new Error(`no new recorded session in ${JSON.stringify(sessions)}`);

    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${world.server.url}/sessions/${recorded.uid}`);
    const play = page.getByRole('button', { name: 'Play recording' });
    const seek = page.getByLabel('Position in the recording');
    await play.waitFor();
    // Above the fold: the player's controls are on the first screen, nothing scrolled.
    expect(await page.evaluate('window.scrollY')).to.equal(0);
    for (const control of [play, seek, page.getByTestId('playback')]) {
      const box = await control.boundingBox();
      expect(box, 'a player control has no box').to.not.equal(null);
      expect((box?.y ?? 0) + Math.min(box?.height ?? 0, 40)).to.be.at.most(900);
    }

    const details = page.locator('dl.props');
    const value = async (term: string) =>
      ((await details.locator(`dt:text-is("${term}") + dd`).textContent()) ?? '').trim();
    expect(await value('Started')).to.not.equal('');
    expect(await value('Ended')).to.not.equal('Still active');
    expect(await value('Duration')).to.match(/^\d+ s$/);
    expect(Number.parseInt(await value('Duration'), 10)).to.be.at.least(4);
    expect(await value('Exit status')).to.equal('exit status 3');
    expect(await value('Signed in with')).to.equal('Password');

    const events = page.getByRole('table', { name: 'Session events' });
    const text = (await events.textContent()) ?? '';
    for (const line of [
      'Signed in with a password',
      'Opened a terminal (xterm',
      'Started a shell',
      'Ended with exit status 3',
    ])
      expect(text).to.contain(line);
    expect(text, 'events are sentences, not JSON').to.not.match(/[{}"]/);

    const markers = await page.getByTestId('timeline').locator('.marker').count();
    expect(markers).to.be.at.least(3);

    const screen = () => page.getByTestId('playback').locator('.xterm-rows').textContent();
    const status = page.getByRole('status').filter({ hasText: /Playing|Paused|Finished|recorded/ });
    await play.click();
    await eventually(async () => ((await screen())?.includes('one-1') ? true : undefined), 'one-1 played');
    await page.getByRole('button', { name: 'Pause' }).click();
    const paused = ((await status.textContent()) ?? '').trim();
    expect(paused).to.match(/^Paused at \d:\d\d$/);
    await page.waitForTimeout(1500);
    expect(((await status.textContent()) ?? '').trim()).to.equal(paused);
    expect(await screen()).to.not.contain('three-3');

    const end = (await seek.getAttribute('max')) ?? '0';
    await seek.fill(end);
    await eventually(async () => ((await screen())?.includes('three-3') ? true : undefined), 'the end shown');
    await status.filter({ hasText: 'Finished' }).waitFor();
    await seek.fill('0');
    await eventually(
      async () => (!(await screen())?.includes('two-2') ? true : undefined),
      'the screen back at the start',
    );
    await page.getByRole('button', { name: 'Resume' }).click();
    await status.filter({ hasText: 'Finished' }).waitFor({ timeout: 20_000 });
    expect(await screen()).to.contain('three-3');
    await expectAccessible(page, 'session details, recorded');
  });

  it('says on the page of a recording that lost output how much, and still plays the rest (on PostgreSQL: TEST_DATABASE_URL)', async function () {
    // The journal counts what it gave up on once the store is back (tested in test/unit/community/journal.test.ts);
    // here the count is written as it writes it, which needs the server's own database.
    if (!world.server.databaseUrl) this.skip();
    const recorded = (await list()).find((s) => s.recorded);
    if (!recorded) throw new Error('no recorded session');
    const db = new pg.Client({ connectionString: world.server.databaseUrl });
    await db.connect();
    try {
      await db.query(
        'update sessions set recording_lost_bytes = $2, recording_lost_at = now() where uid = $1',
        [recorded.uid, 5 * 1024 * 1024 + 300 * 1024],
      );
    } finally {
      await db.end();
    }
    const answer = await (await world.api(`/api/sessions/${recorded.uid}`)).json();
    expect(answer.recording_lost_bytes).to.equal(5 * 1024 * 1024 + 300 * 1024);
    await page.goto(`${world.server.url}/sessions/${recorded.uid}`);
    const alert = page.getByText('Part of this recording was not stored');
    await alert.waitFor();
    await page.getByText(/5\.3 MiB of this session's output could not be written/).waitFor();
    await page.getByRole('button', { name: 'Play recording' }).waitFor();
    await expectAccessible(page, 'session whose recording lost output', { anyImpact: true });
  });

  it('keeps recordings for the time chosen in the namespace settings, and says so on a session whose recording went (on PostgreSQL: TEST_DATABASE_URL)', async function () {
    // The sweep runs hourly in the server (tested in test/integration/store/recording-retention.test.ts); here
    // its result is written as it writes it, which needs the server's own database.
    // The embedded store is the server process's own: without TEST_DATABASE_URL no test can reach it.
    if (!world.server.databaseUrl) this.skip();
    await page.goto(`${world.server.url}/settings/namespace`);
    const keep = page.getByLabel('Keep recordings');
    expect(await keep.inputValue()).to.equal('0');
    await keep.selectOption('30');
    await page.getByText('Recordings are kept for 30 days').waitFor();
    const ns = await (await world.api(`/api/namespaces/${world.auth.tenant}`)).json();
    expect(ns.settings.recording_retention_days).to.equal(30);
    await expectAccessible(page, 'namespace settings with retention');

    const recorded = (await list()).find((s) => s.recorded);
    if (!recorded) throw new Error('no recorded session');
    const db = new pg.Client({ connectionString: world.server.databaseUrl });
    await db.connect();
    try {
      await db.query('delete from session_records where session_uid = $1', [recorded.uid]);
      await db.query(
        `update sessions set recording_removed_at = now(), recording_removed_reason = 'retention' where uid = $1`,
        [recorded.uid],
      );
    } finally {
      await db.end();
    }
    await page.goto(`${world.server.url}/sessions/${recorded.uid}`);
    await page.getByText('The recording was removed on').waitFor();
    await page.getByText('Recording removed', { exact: true }).waitFor();
    expect(await page.getByRole('button', { name: 'Play recording' }).count()).to.equal(0);
    await expectAccessible(page, 'session whose recording was removed');
    await page.goto(`${world.server.url}/sessions`);
    await page.getByText('Recording removed').first().waitFor();
  });

  it('opens the device from the Device column and the session from its Details link', async () => {
    await page.goto(`${world.server.url}/sessions`);
    const table = page.getByRole('table', { name: 'Sessions' });
    const device = table.getByRole('link', { name: 'edge-rec', exact: true }).first();
    await device.waitFor();
    await device.click();
    await page.waitForURL(`${world.server.url}/device/${world.uid}`);
    await page.getByRole('heading', { name: 'edge-rec' }).waitFor();
    await page.goBack();
    await table
      .getByRole('link', { name: /^Details of the session of root on edge-rec/ })
      .first()
      .click();
    await page.getByRole('heading', { name: 'Session on edge-rec' }).waitFor();
    expect(page.url()).to.match(/\/sessions\/[0-9a-f]{64}$/);
  });

  /** Starts a terminal session that stays open until it is closed, and answers once the API lists it active. */
  const openTerminal = async () => {
    const before = new Set((await list()).filter((s) => s.active).map((s) => s.uid));
    const running = ssh({ tty: true, input: 'sleep 600\r' });
    running.catch(() => undefined);
    const uid = await eventually(
      async () => (await list()).find((s) => s.active && s.authenticated && !before.has(s.uid))?.uid,
      'the terminal session to be active',
      20_000,
    );
    return { uid, running };
  };

  it('filters sessions by user, device, active and dates, and closes an active one after asking, at 390 px', async () => {
    const failed = await sshThroughGateway({
      port: world.server.sshPort,
      target: `alice@${world.auth.user}.edge-rec`,
      password: 'not-the-password',
      command: 'true',
    });
    expect(failed.code).to.equal(255);
    const { uid, running } = await openTerminal();

    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${world.server.url}/sessions`);
    const table = page.getByRole('table', { name: 'Sessions' });
    const rows = table.locator('tbody tr');
    const filters = page.getByRole('search', { name: 'Filter sessions' });
    await table.getByText('Active', { exact: true }).first().waitFor();
    const all = await rows.count();
    expect(all).to.be.at.least(3);

    const shows = async (n: number | 'none', what: string) => {
      if (n === 'none') await page.getByText('No sessions match these filters').waitFor();
      else
        await eventually(
          async () => ((await rows.count()) === n ? true : undefined),
          `${what}: ${n} rows`,
          10_000,
        );
    };
    await filters.getByLabel('Active only').check();
    await shows(1, 'active only');
    await expectAccessible(page, 'sessions, filtered, 390 px');
    const close = table.getByRole('button', { name: /^Close the session of root on edge-rec/ });
    expect(await close.count()).to.equal(1);
    await close.click();
    const dialog = page.getByRole('dialog', { name: 'Close this session?' });
    await dialog.getByText('ends at once').waitFor();
    await expectAccessible(page, 'close session dialog, 390 px');
    await dialog.getByRole('button', { name: 'Close session' }).click();
    await page.getByText('Session closed').waitFor();
    // The connection ends on the client's side too, long before its sleep would.
    await running;
    await shows('none', 'active only, after closing');
    await filters.getByLabel('Active only').uncheck();
    await shows(all, 'active or not');
    await filters.getByLabel('User', { exact: true }).fill('alice');
    await shows(1, 'user alice');
    expect(await rows.first().textContent()).to.contain('Not authenticated');
    await filters.getByLabel('User', { exact: true }).fill('nobody');
    await shows('none', 'user nobody');
    await filters.getByRole('button', { name: 'Clear filters' }).click();
    await shows(all, 'cleared');
    await filters.getByLabel('Device', { exact: true }).selectOption({ label: 'edge-rec' });
    await shows(all, 'the one device');

    const today = (await page.evaluate('new Date().toLocaleDateString("sv")')) as string;
    const yesterday = (await page.evaluate(
      'new Date(Date.now() - 86400000).toLocaleDateString("sv")',
    )) as string;
    await filters.getByLabel('To', { exact: true }).fill(yesterday);
    await shows('none', 'up to yesterday');
    await filters.getByLabel('From', { exact: true }).fill(today);
    await filters.getByRole('alert').filter({ hasText: 'The first day is after the last day.' }).waitFor();
    await filters.getByLabel('To', { exact: true }).fill(today);
    await shows(all, 'today');

    const closed = (await list()).find((s) => s.uid === uid);
    expect(closed?.active).to.equal(false);
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('closes an active session from its page at 1280 px, and offers no Close once it has ended', async () => {
    const { uid, running } = await openTerminal();
    await page.goto(`${world.server.url}/sessions/${uid}`);
    const state = page.locator('dl.props dt:text-is("State") + dd');
    await state.getByText('Active', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Close session' }).click();
    const dialog = page.getByRole('dialog', { name: 'Close this session?' });
    await expectAccessible(page, 'close session dialog, 1280 px');
    await dialog.getByRole('button', { name: 'Close session' }).click();
    await page.getByText('Session closed').waitFor();
    await running;
    await state.getByText('Ended', { exact: true }).waitFor();
    expect(await page.getByRole('button', { name: 'Close session' }).count()).to.equal(0);
    expect((await list()).find((s) => s.uid === uid)?.active).to.equal(false);
    await expectAccessible(page, 'session details, closed');
  });
});
