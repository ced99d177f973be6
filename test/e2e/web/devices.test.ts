import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Page, Route } from 'playwright-core';
import { AgentProcess, DEVICE_AGENT_PASSWORD, eventually } from '../../support/agent-process';
import { expectAccessible } from './support/browser';
import type { ConsoleServer } from './support/console-server';
import { type SignedInConsole, signedInConsole } from './support/signed-in';
import { sshThroughGateway } from './support/ssh';

// A real agent registers; the owner accepts it in the console, turns on session recording, connects with the
// real OpenSSH client and with the web terminal, and plays both recordings back in the browser. The agent runs
// in single-user mode (GATEHOUSE_SINGLE_USER_PASSWORD), so the device password is the agent's.

const devicePassword = DEVICE_AGENT_PASSWORD;

describe('web console: a real device, accepted, reached and its session played back', function () {
  this.timeout(120_000);
  let signedIn: SignedInConsole | undefined;
  let server: ConsoleServer;
  let page: Page;
  let keys: string;
  let agent: AgentProcess;
  let auth: { token: string; tenant: string; user: string };
  let uid: string;

  const api = async (p: string, init: RequestInit = {}) =>
    fetch(`${server.url}${p}`, {
      ...init,
      headers: { Authorization: `Bearer ${auth.token}`, ...init.headers },
    });

  before(async () => {
    // Copy and paste in the terminal go through the system clipboard, as they would for a person.
    signedIn = await signedInConsole({ clipboard: true });
    ({ server, page, auth } = signedIn);
    keys = mkdtempSync(path.join(tmpdir(), 'gatehouse-web-agent-'));
    agent = AgentProcess.device({
      server: server.url,
      tenant: auth.tenant,
      keyPath: path.join(keys, 'device.key'),
      identity: '02:00:00:00:00:42',
      hostname: 'edge-web',
    });
  });
  after(async () => {
    await agent?.stop();
    await signedIn?.close();
    if (keys) rmSync(keys, { recursive: true, force: true });
  });

  it('lists the registered agent as pending and accepts it', async () => {
    await agent.waitFor(/pending acceptance/);
    uid = await agent.uid();
    // An agent is a device wherever it runs: in a container (this host has /.dockerenv) too.
    await page.goto(`${server.url}/devices/pending`);
    const table = page.getByRole('table', { name: 'Pending devices' });
    await table.getByText('edge-web').waitFor();
    await expectAccessible(page, 'pending devices');
    await page.getByRole('button', { name: 'Accept edge-web' }).click();
    await page.getByText('edge-web accepted').waitFor();
    await page.getByText(`Nothing waiting`).waitFor();
    await page.goto(`${server.url}/devices`);
    await page.getByRole('table', { name: 'Accepted devices' }).getByText('edge-web').waitFor();
    await expectAccessible(page, 'accepted devices');
    const device = (await (await api(`/api/devices/${uid}`)).json()) as { status: string };
    expect(device.status).to.equal('accepted');
  });

  it('shows the device with a copyable ssh command once it is online', async () => {
    await eventually(
      async () =>
        ((await (await api(`/api/devices/${uid}`)).json()) as { online: boolean }).online || undefined,
      'device online',
      30_000,
    );
    await page.goto(`${server.url}/device/${uid}`);
    await page.getByRole('heading', { name: 'edge-web' }).waitFor();
    await page.getByText('Online').first().waitFor();
    const command = await page.getByLabel('ssh command', { exact: true }).inputValue();
    expect(command).to.equal(`ssh -p ${server.sshPort} root@${auth.user}.edge-web@127.0.0.1`);
    await expectAccessible(page, 'device details');
  });

  it('records a session once recording is on, and plays it back in the browser', async () => {
    await page.goto(`${server.url}/settings/namespace`);
    const recording = page.getByRole('switch', { name: 'Record the terminal output of every session' });
    await recording.waitFor();
    // New namespaces record by default: switch it off and on again, as a person checking the setting would.
    expect(await recording.isChecked()).to.equal(true);
    await recording.click();
    await page.getByText('Session recording is off').waitFor();
    await page
      .getByRole('switch', { name: 'Record the terminal output of every session', checked: false })
      .waitFor();
    await recording.click();
    await page.getByText('Sessions will be recorded').waitFor();
    await page
      .getByRole('switch', { name: 'Record the terminal output of every session', checked: true })
      .waitFor();
    const namespace = (await (await api(`/api/namespaces/${auth.tenant}`)).json()) as {
      settings: { session_record: boolean };
    };
    expect(namespace.settings.session_record).to.equal(true);
    await expectAccessible(page, 'namespace settings');

    const ssh = await sshThroughGateway({
      port: server.sshPort,
      target: `root@${auth.user}.edge-web`,
      password: devicePassword,
      tty: true,
      input: 'echo web-e2e-$((6 * 7))\rexit\r',
    });
    expect(ssh.out).to.contain('web-e2e-42');

    await page.goto(`${server.url}/sessions`);
    const row = page
      .getByRole('table', { name: 'Sessions' })
      .getByRole('link', { name: /^Details of the session of root on edge-web/ })
      .first();
    await row.waitFor();
    await expectAccessible(page, 'sessions');
    await eventually(
      async () => {
        const list = (await (await api('/api/sessions')).json()) as { active: boolean }[];
        return list.every((s) => !s.active) || undefined;
      },
      'the session to close',
      20_000,
    );
    await row.click();
    await page.getByRole('heading', { name: 'Recording' }).waitFor();
    await page.getByRole('button', { name: 'Play recording' }).click();
    await page.getByText('Finished').waitFor({ timeout: 30_000 });
    const played = await page.getByTestId('playback').locator('.xterm-rows').textContent();
    expect(played).to.contain('web-e2e-42');
    await expectAccessible(page, 'session details');
  });

  /** The web terminal's screen and scrollback as text, read from xterm's buffer. */
  const terminalText = async () =>
    (await page.evaluate(`(() => {
      const term = document.querySelector('[data-testid="terminal"]')?.gatehouseTerminal;
      if (!term) return '';
      const buffer = term.buffer.active;
      const lines = [];
      for (let i = 0; i < buffer.length; i++) lines.push(buffer.getLine(i)?.translateToString(true) ?? '');
      return lines.join('\\n');
    })()`)) as string;
  const terminalShows = (re: RegExp, what: string) =>
    eventually(
      async () => re.exec(await terminalText()) ?? undefined,
      `the terminal to show ${what}`,
      20_000,
    );
  const terminalSize = async () =>
    (await page.evaluate(`(() => {
      const term = document.querySelector('[data-testid="terminal"]').gatehouseTerminal;
      return { cols: term.cols, rows: term.rows };
    })()`)) as { cols: number; rows: number };
  const typeInTerminal = async (text: string) => {
    await page.keyboard.type(text);
    await page.keyboard.press('Enter');
  };

  it('tells the person when the device refuses the password, and lets them sign in again', async () => {
    const devicePage = `${server.url}/device/${uid}`;
    await page.goto(devicePage);
    await page.getByRole('link', { name: 'Open terminal' }).click();
    await page.getByRole('heading', { name: 'Sign in to edge-web' }).waitFor();
    await expectAccessible(page, 'terminal sign-in');
    await page.getByLabel('Device password').fill('not-the-password');
    await page.getByRole('button', { name: 'Connect' }).click();
    await page.getByText('Wrong user name or password.').waitFor({ timeout: 20_000 });
    await expectAccessible(page, 'terminal refused');
    // The refusal is said above the sign-in form, ready for another try.
    await page.getByRole('heading', { name: 'Sign in to edge-web' }).waitFor();
  });

  it('opens the web terminal with the device password, runs a command and sees its output', async () => {
    await page.getByLabel('Device user').fill('root');
    await page.getByLabel('Device password').fill(devicePassword);
    await page.getByRole('button', { name: 'Connect' }).click();
    await page.getByText('Connected as root').waitFor({ timeout: 20_000 });
    await page.getByTestId('terminal').click();
    await typeInTerminal('echo web-term-$((6 * 7))');
    await terminalShows(/^web-term-42$/m, 'the command output');
    await expectAccessible(page, 'web terminal');
  });

  it('resizes the remote terminal with the browser window', async () => {
    const before = await terminalSize();
    await page.setViewportSize({ width: 900, height: 700 });
    const after = await eventually(async () => {
      const size = await terminalSize();
      return size.cols !== before.cols && size.rows !== before.rows ? size : undefined;
    }, 'the terminal to fit the smaller window');
    expect(after.cols).to.be.below(before.cols);
    await typeInTerminal('echo size=$(stty size)');
    await terminalShows(
      new RegExp(`^size=${after.rows} ${after.cols}$`, 'm'),
      `size=${after.rows} ${after.cols}`,
    );
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('copies the selection with Ctrl+Shift+C and pastes with Ctrl+Shift+V', async () => {
    // Select the command's output line as a person would by dragging over it, then copy it.
    const row = (await page.evaluate(`(() => {
      const term = document.querySelector('[data-testid="terminal"]').gatehouseTerminal;
      const buffer = term.buffer.active;
      for (let i = 0; i < buffer.length; i++)
        if (buffer.getLine(i)?.translateToString(true) === 'web-term-42') return i;
      return -1;
    })()`)) as number;
    expect(row).to.be.at.least(0);
    // Focus first (a click clears any selection), then select the line.
    await page.getByTestId('terminal').click();
    await page.evaluate(
      `document.querySelector('[data-testid="terminal"]').gatehouseTerminal.select(0, ${row}, 11)`,
    );
    await page.keyboard.press('Control+Shift+KeyC');
    const copied = await eventually(
      async () => ((await page.evaluate('navigator.clipboard.readText()')) as string) || undefined,
      'the clipboard to hold the selection',
    );
    expect(copied).to.equal('web-term-42');

    await page.evaluate(`navigator.clipboard.writeText('echo pasted-$((2 + 3))')`);
    await page.getByTestId('terminal').click();
    await page.keyboard.press('Control+Shift+KeyV');
    await page.keyboard.press('Enter');
    await terminalShows(/^pasted-5$/m, 'the pasted command run');
  });

  it('says why the session ended and reconnects with one click', async () => {
    await typeInTerminal('exit 3');
    const ended = page.getByRole('status').filter({ hasText: 'Disconnected' });
    await ended.waitFor({ timeout: 20_000 });
    expect(await ended.textContent()).to.contain('The session ended (exit status 3).');
    await expectAccessible(page, 'terminal disconnected');
    await page.getByRole('button', { name: 'Reconnect' }).click();
    await page.getByText('Connected as root').waitFor({ timeout: 20_000 });
    await page.getByTestId('terminal').click();
    await typeInTerminal('echo again-$((1 + 1)); exit');
    await terminalShows(/^again-2$/m, 'the command after reconnecting');
    await ended.waitFor({ timeout: 20_000 });
  });

  it('lists the web terminal session as type web and plays its recording back', async () => {
    await eventually(
      async () => {
        const list = (await (await api('/api/sessions')).json()) as { active: boolean; type: string }[];
        return list.filter((s) => s.type === 'web').length >= 3 && list.every((s) => !s.active)
          ? true
          : undefined;
      },
      'the web sessions to close',
      20_000,
    );
    const sessions = (await (await api('/api/sessions')).json()) as {
      uid: string;
      type: string;
      authenticated: boolean;
      recorded: boolean;
    }[];
    const web = sessions.filter((s) => s.type === 'web');
    // The refused sign-in is a session too, never authenticated; the two that signed in were recorded.
    expect(web.map((s) => [s.authenticated, s.recorded]).sort()).to.deep.equal([
      [false, false],
      [true, true],
      [true, true],
    ]);
    await page.goto(`${server.url}/sessions`);
    const table = page.getByRole('table', { name: 'Sessions' });
    await table.getByText('Web terminal').first().waitFor();
    expect(await table.getByText('Web terminal').count()).to.equal(3);
    expect(await table.getByText('SSH', { exact: true }).count()).to.equal(1);
    // The first web session that signed in is the one that ran the commands above.
    const first = web.filter((s) => s.authenticated).at(-1);
    if (!first) throw new Error('no authenticated web session');
    await page.goto(`${server.url}/sessions/${first.uid}`);
    await page.getByRole('heading', { name: 'Recording' }).waitFor();
    await page.getByRole('button', { name: 'Play recording' }).click();
    await page.getByText('Finished').waitFor({ timeout: 30_000 });
    const played = await page.getByTestId('playback').locator('.xterm-rows').textContent();
    expect(played).to.contain('web-term-42');
    expect(played).to.contain('pasted-5');
  });

  it('names the device in the sessions list and details whether or not the answer includes it', async () => {
    // This server answers each session with its device; servers before it left the device out, and a deleted
    // device is null. The console looks the name up in that case: the answers are stripped here to show it.
    const sessions = (await (await api('/api/sessions')).json()) as {
      uid: string;
      device?: { name: string };
    }[];
    expect(sessions.every((s) => s.device?.name === 'edge-web')).to.equal(true);
    const strip = async (route: Route) => {
      const answer = await route.fetch();
      const body = (await answer.json()) as Record<string, unknown> | Record<string, unknown>[];
      for (const session of Array.isArray(body) ? body : [body]) delete session.device;
      await route.fulfill({ response: answer, json: body });
    };
    await page.route(/\/api\/sessions(\/[0-9a-f-]+)?(\?|$)/, strip);
    try {
      await page.goto(`${server.url}/sessions`);
      const table = page.getByRole('table', { name: 'Sessions' });
      await table.getByRole('link', { name: 'edge-web', exact: true }).first().waitFor();
      expect(await table.getByRole('link', { name: 'edge-web', exact: true }).count()).to.equal(
        sessions.length,
      );
      // The device column opens the device; the row's Details link opens the session.
      expect(
        await table.getByRole('link', { name: 'edge-web', exact: true }).first().getAttribute('href'),
      ).to.equal(`/device/${uid}`);
      await table
        .getByRole('link', { name: /^Details of the session/ })
        .first()
        .click();
      await page.getByRole('heading', { name: 'Session on edge-web' }).waitFor();
      const deviceLink = page.getByRole('link', { name: 'edge-web', exact: true });
      expect(await deviceLink.getAttribute('href')).to.equal(`/device/${uid}`);
    } finally {
      await page.unroute(/\/api\/sessions(\/[0-9a-f-]+)?(\?|$)/, strip);
    }
  });
});
