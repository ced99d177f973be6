import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { podmanCli, podmanSettings } from '../../../packaging/release/podman';
import { ensureAgentImageServed } from '../../support/agent-image';
import { eventually } from '../../support/agent-process';
import { completeSetup, expectAccessible, launchBrowser } from './support/browser';
import { type ConsoleServer, startConsoleServer } from './support/console-server';

// A new owner's first screens: Home's Connect box and the install commands (copied, then really run), the empty
// Devices screen, the sidebar's pending count, tags as chips with suggestions, SHA256 fingerprints as ssh-keygen
// prints them, and settings split into the account's and the namespace's.

const repo = fileURLToPath(new URL('../../../', import.meta.url));

describe('web console: Home, install commands, pending count, tags, fingerprints, settings', function () {
  this.timeout(180_000);
  let server: ConsoleServer;
  let browser: Browser;
  let page: Page;
  let auth: { token: string; tenant: string; user: string };
  let scratch: string;
  let podmanDir: string;

  const api = (p: string, init: RequestInit = {}) =>
    fetch(`${server.url}${p}`, {
      ...init,
      headers: {
        Authorization: `Bearer ${auth.token}`,
        ...(init.body ? { 'Content-Type': 'application/json' } : {}),
      },
    });

  before(async () => {
    // The install commands download the agent executable and image this server serves (the suite's global set-up
    // builds the executable; the image is made from it when no release left one).
    if (!existsSync(path.join(repo, 'agent', 'dist', 'gatehouse-agent-linux-amd64'))) {
      execFileSync(process.execPath, ['--import', 'tsx', 'build-executable.ts'], {
        cwd: path.join(repo, 'agent'),
      });
    }
    await ensureAgentImageServed();
    podmanDir = mkdtempSync(path.join(tmpdir(), 'gatehouse-home-podman-'));
    [server, browser] = await Promise.all([startConsoleServer(), launchBrowser()]);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    page = await context.newPage();
    await completeSetup(page, server.setupUrl);
    await page.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
    auth = JSON.parse((await page.evaluate('localStorage.getItem("gatehouse.auth")')) as string);
    scratch = mkdtempSync(path.join(tmpdir(), 'gatehouse-home-'));
  });
  after(async () => {
    if (podmanDir) {
      const podman = podmanCli(podmanSettings(podmanDir));
      await podman('rm', '--force', '--time', '2', 'gatehouse-agent').catch(() => undefined);
      await podman('system', 'reset', '--force').catch(() => undefined);
      rmSync(podmanDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
    }
    await browser?.close();
    await server?.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  const copied = async (label: string) => {
    await page.getByRole('button', { name: `Copy ${label}` }).click();
    return (await page.evaluate('navigator.clipboard.readText()')) as string;
  };

  it("shows the whole ssh address with the port and the namespace's real name", async () => {
    const namespace = (await (await api(`/api/namespaces/${auth.tenant}`)).json()) as { name: string };
    const field = page.getByLabel('ssh address form', { exact: true });
    await eventually(
      async () => ((await field.inputValue()).includes(`@${namespace.name}.`) ? true : undefined),
      'the namespace name in the Connect box',
    );
    expect(await field.inputValue()).to.equal(
      `ssh -p ${server.sshPort} <device-user>@${namespace.name}.<device-name>@127.0.0.1`,
    );
    // All of it is on screen: nothing scrolled out of the field.
    const cut = (await field.evaluate(
      (el: { scrollWidth: number; clientWidth: number; scrollHeight: number; clientHeight: number }) =>
        el.scrollWidth > el.clientWidth || el.scrollHeight > el.clientHeight + 1,
    )) as boolean;
    expect(cut).to.equal(false);
    expect(await copied('ssh address form')).to.equal(await field.inputValue());
    await expectAccessible(page, 'home');
  });

  it('gives the install command the server serves, with the tenant, and it installs the agent as copied', async () => {
    const command = await copied('install command');
    expect(command).to.equal(
      `curl -fsSL "${server.url}/agent/install.sh" | GATEHOUSE_SERVER_ADDRESS="${server.url}" GATEHOUSE_TENANT_ID=${auth.tenant} sh`,
    );
    // Run as copied, into a staging root instead of / and starting nothing (install.sh's own switches for that).
    const root = path.join(scratch, 'root');
    const staged = command.replace('| ', `| GATEHOUSE_INSTALL_ROOT=${root} GATEHOUSE_NO_SYSTEMD=1 `);
    const run = spawnSync('sh', ['-c', staged], { encoding: 'utf8' });
    expect(run.status, run.stderr).to.equal(0);
    const settings = readFileSync(path.join(root, 'etc/default/gatehouse-agent'), 'utf8');
    expect(settings).to.contain(`GATEHOUSE_SERVER_ADDRESS=${server.url}\n`);
    expect(settings).to.contain(`GATEHOUSE_TENANT_ID=${auth.tenant}\n`);
    expect(existsSync(path.join(root, 'usr/local/bin/gatehouse-agent'))).to.equal(true);
  });

  it('shows the install commands on the empty Devices screen too', async () => {
    await page.goto(`${server.url}/devices`);
    await page.getByText('No accepted devices yet').waitFor();
    expect(await page.getByLabel('install command', { exact: true }).inputValue()).to.contain(
      `GATEHOUSE_TENANT_ID=${auth.tenant} sh`,
    );
    expect(await page.getByLabel('docker run command', { exact: true }).inputValue()).to.contain(
      `-e GATEHOUSE_TENANT_ID=${auth.tenant}`,
    );
    await expectAccessible(page, 'devices (empty, with install commands)');
  });

  it('gives a docker line that loads the agent image from the server and runs it, which then waits: the sidebar counts it', async () => {
    const line = await copied('docker run command');
    const info = (await (await fetch(`${server.url}/info`)).json()) as { version: string };
    expect(line).to.equal(
      `curl -fsSL "${server.url}/agent/gatehouse-agent-image-linux-amd64.tar.gz" | gunzip | docker load && ` +
        'docker run -d --name gatehouse-agent --restart unless-stopped ' +
        `-e GATEHOUSE_SERVER_ADDRESS="${server.url}" -e GATEHOUSE_TENANT_ID=${auth.tenant} ` +
        `-v gatehouse-agent:/var/lib/gatehouse-agent localhost/gatehouse-agent:${info.version}`,
    );
    // Run as copied with podman in docker's place (its command line takes the same words), on the host's network
    // because this test's server listens on 127.0.0.1 only, and with a name and a short interval for the test.
    const podmanLine = line
      .replace('| docker load', '| podman load')
      .replace(
        'docker run -d',
        'podman run -d --network host -e GATEHOUSE_PREFERRED_HOSTNAME=docker-agent -e GATEHOUSE_KEEPALIVE_INTERVAL=1',
      );
    const started = spawnSync('sh', ['-c', podmanLine], {
      env: { ...process.env, ...podmanSettings(podmanDir) },
      encoding: 'utf8',
    });
    expect(started.status, started.stderr).to.equal(0);
    const log = () =>
      spawnSync('podman', ['logs', 'gatehouse-agent'], {
        env: { ...process.env, ...podmanSettings(podmanDir) },
        encoding: 'utf8',
      }).stderr;
    const badge = page.getByTestId('pending-count');
    await page.goto(`${server.url}/`);
    await badge.waitFor({ timeout: 40_000 }).catch((err: Error) => {
      throw new Error(`${err.message}\nthe agent said:\n${log()}`);
    });
    expect((await badge.textContent())?.trim()).to.equal('1 waiting for acceptance');
    const devicesLink = page
      .getByRole('navigation', { name: 'Primary' })
      .getByRole('link', { name: /^Devices/ });
    expect(await devicesLink.textContent()).to.contain('1');
    await expectAccessible(page, 'home with a pending device');

    await page.goto(`${server.url}/devices/pending`);
    await page.getByRole('button', { name: 'Accept docker-agent' }).click();
    await page.getByText('docker-agent accepted').waitFor();
    await page.goto(`${server.url}/devices`);
    await badge.waitFor({ state: 'detached', timeout: 20_000 });
  });

  it("edits a device's tags as chips, with the namespace's tags suggested", async () => {
    const devices = (await (await api('/api/devices')).json()) as { uid: string; name: string }[];
    const device = devices.find((d) => d.name === 'docker-agent');
    if (!device) throw new Error('no docker-agent device');
    expect(
      (await api(`/api/devices/${device.uid}/tags`, { method: 'PUT', body: '{"tags":["edge","lab"]}' }))
        .status,
    ).to.equal(200);
    await page.goto(`${server.url}/device/${device.uid}`);
    await page.getByRole('button', { name: 'Edit tags' }).click();
    const dialog = page.getByRole('dialog', { name: 'Tags of docker-agent' });
    await dialog.getByRole('button', { name: 'Remove tag lab' }).click();
    expect(await dialog.getByRole('button', { name: /^Remove tag/ }).count()).to.equal(1);
    // The namespace still has "lab" (saved on the device): it is offered back.
    const offered = await dialog
      .locator('datalist option')
      .evaluateAll((options) => options.map((o) => (o as unknown as { value: string }).value));
    expect(offered).to.deep.equal(['lab']);
    await dialog.getByLabel('Tags').fill('prod');
    await dialog.getByLabel('Tags').press('Enter');
    await dialog.getByRole('button', { name: 'Remove tag prod' }).waitFor();
    await expectAccessible(page, 'tags dialog');
    await dialog.getByRole('button', { name: 'Save tags' }).click();
    await page.getByText('Tags saved').waitFor();
    const saved = (await (await api(`/api/devices/${device.uid}`)).json()) as { tags: string[] };
    expect(saved.tags).to.deep.equal(['edge', 'prod']);
  });

  it('shows public keys with the SHA256 fingerprint ssh-keygen -l prints, and the MD5 one', async () => {
    const file = path.join(scratch, 'id_ed25519');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'ada@laptop', '-f', file]);
    const line = readFileSync(`${file}.pub`, 'utf8').trim();
    const created = await api('/api/sshkeys/public-keys', {
      method: 'POST',
      body: JSON.stringify({
        name: 'laptop',
        data: Buffer.from(line).toString('base64'),
        username: '.*',
        filter: { hostname: '.*' },
      }),
    });
    expect(created.status).to.equal(200);
    const sha256 = execFileSync('ssh-keygen', ['-l', '-f', `${file}.pub`], { encoding: 'utf8' }).split(
      ' ',
    )[1];
    const md5 = execFileSync('ssh-keygen', ['-l', '-E', 'md5', '-f', `${file}.pub`], {
      encoding: 'utf8',
    }).split(' ')[1];
    expect(sha256).to.match(/^SHA256:/);
    await page.goto(`${server.url}/public-keys`);
    const row = page
      .getByRole('table', { name: 'Public keys' })
      .getByRole('row')
      .filter({ hasText: 'laptop' });
    await row.getByText(sha256 as string, { exact: true }).waitFor();
    await row.getByText(md5 as string, { exact: true }).waitFor();
  });

  it('splits settings into the account and the namespace, each with its own tabs and sidebar item', async () => {
    const sidebar = page.getByRole('navigation', { name: 'Primary' });
    await page.goto(`${server.url}/settings/profile`);
    await page.getByRole('heading', { name: 'Account settings' }).waitFor();
    const accountTabs = await page
      .getByRole('navigation', { name: 'Account settings sections' })
      .getByRole('link')
      .allTextContents();
    expect(accountTabs).to.deep.equal(['Profile', 'Password & MFA']);
    expect(
      await sidebar.getByRole('link', { name: 'Account', exact: true }).getAttribute('aria-current'),
    ).to.equal('page');
    expect(
      await sidebar.getByRole('link', { name: 'Namespace', exact: true }).getAttribute('aria-current'),
    ).to.equal(null);
    await expectAccessible(page, 'account settings');

    await sidebar.getByRole('link', { name: 'Namespace', exact: true }).click();
    await page.getByRole('heading', { name: 'Namespace settings' }).waitFor();
    const namespaceTabs = await page
      .getByRole('navigation', { name: 'Namespace settings sections' })
      .getByRole('link')
      .allTextContents();
    expect(namespaceTabs).to.include.members(['General', 'Members', 'API keys']);
    expect(namespaceTabs).to.not.include('Profile');
    await page
      .getByRole('navigation', { name: 'Namespace settings sections' })
      .getByRole('link', { name: 'Members' })
      .click();
    await page.waitForURL(`${server.url}/settings/members`);
    expect(
      await sidebar.getByRole('link', { name: 'Namespace', exact: true }).getAttribute('aria-current'),
    ).to.equal('page');
    await expectAccessible(page, 'namespace settings');
  });
});
