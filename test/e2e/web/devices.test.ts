import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { AgentProcess, eventually } from '../../integration/devices/agent-process';
import { completeSetup, expectAccessible, launchBrowser } from './support/browser';
import { type ConsoleServer, startConsoleServer } from './support/console-server';

// A real agent registers; the owner accepts it in the console, turns on session recording, connects with the
// real OpenSSH client, and plays the recording back in the browser.

const devicePassword = 'agent-secret';

function sshThroughGateway(
  port: number,
  target: string,
  input: string,
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'sshpass',
      [
        '-e',
        'ssh',
        '-F',
        '/dev/null',
        '-o',
        'StrictHostKeyChecking=no',
        '-o',
        'UserKnownHostsFile=/dev/null',
        '-o',
        'LogLevel=ERROR',
        '-o',
        'PreferredAuthentications=password',
        '-o',
        'PubkeyAuthentication=no',
        '-tt',
        '-p',
        String(port),
        `${target}@127.0.0.1`,
      ],
      { env: { ...process.env, SSHPASS: devicePassword }, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      out += c.toString();
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`ssh timed out; output: ${out}`));
    }, 30_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
    // Typed slowly enough for the remote shell to be there before the input.
    setTimeout(() => child.stdin.write(input), 1500);
  });
}

describe('web console: a real device, accepted, reached and its session played back', function () {
  this.timeout(120_000);
  let server: ConsoleServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let keys: string;
  let agent: AgentProcess;
  let auth: { token: string; tenant: string; user: string };
  let kind: 'devices' | 'containers';
  let uid: string;

  const api = async (p: string, init: RequestInit = {}) =>
    fetch(`${server.url}${p}`, {
      ...init,
      headers: { Authorization: `Bearer ${auth.token}`, ...init.headers },
    });

  before(async () => {
    [server, browser] = await Promise.all([startConsoleServer(), launchBrowser()]);
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    await completeSetup(page, server.setupUrl);
    await page.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
    auth = JSON.parse((await page.evaluate('localStorage.getItem("gatehouse.auth")')) as string);
    keys = mkdtempSync(path.join(tmpdir(), 'gatehouse-web-agent-'));
    agent = new AgentProcess({
      server: server.url,
      tenant: auth.tenant,
      keyPath: path.join(keys, 'device.key'),
      identity: '02:00:00:00:00:42',
      hostname: 'edge-web',
    });
  });
  after(async () => {
    await agent?.stop();
    await browser?.close();
    await server?.stop();
    if (keys) rmSync(keys, { recursive: true, force: true });
  });

  it('lists the registered agent as pending and accepts it', async () => {
    await agent.waitFor(/pending acceptance/);
    uid = await agent.uid();
    // An agent inside a container registers as a container; the console shows it under that list.
    kind = (await api(`/api/devices/${uid}`)).status === 200 ? 'devices' : 'containers';
    const label = kind === 'devices' ? 'devices' : 'containers';
    await page.goto(`${server.url}/${kind}/pending`);
    const table = page.getByRole('table', { name: `Pending ${label}` });
    await table.getByText('edge-web').waitFor();
    await expectAccessible(page, `pending ${label}`);
    await page.getByRole('button', { name: 'Accept edge-web' }).click();
    await page.getByText('edge-web accepted').waitFor();
    await page.getByText(`Nothing waiting`).waitFor();
    await page.goto(`${server.url}/${kind}`);
    await page
      .getByRole('table', { name: `Accepted ${label}` })
      .getByText('edge-web')
      .waitFor();
    const device = (await (await api(`/api/${kind}/${uid}`)).json()) as { status: string };
    expect(device.status).to.equal('accepted');
  });

  it('shows the device with a copyable ssh command once it is online', async () => {
    await eventually(
      async () =>
        ((await (await api(`/api/${kind}/${uid}`)).json()) as { online: boolean }).online || undefined,
      'device online',
      30_000,
    );
    await page.goto(`${server.url}/${kind === 'devices' ? 'device' : 'container'}/${uid}`);
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

    const ssh = await sshThroughGateway(
      server.sshPort,
      `root@${auth.user}.edge-web`,
      'echo web-e2e-$((6 * 7))\rexit\r',
    );
    expect(ssh.out).to.contain('web-e2e-42');

    await page.goto(`${server.url}/sessions`);
    const row = page.getByRole('table', { name: 'Sessions' }).getByRole('link', { name: 'edge-web' }).first();
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
});
