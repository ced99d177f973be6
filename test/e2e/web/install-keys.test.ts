import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { AgentProcess, eventually } from '../../support/agent-process';
import { agentAuthRequest } from '../../support/device-keys';
import { expectAccessible, noWiderThanScreen } from './support/browser';
import type { ConsoleServer } from './support/console-server';
import { type SignedInConsole, signedInConsole } from './support/signed-in';

// Namespace settings, Install keys: an owner makes a key (shown once, with the install commands that carry it),
// requires keys for new devices, installs an agent with the copied command (install.sh keeps the key), rotates
// and revokes the key; Home's install card then carries the key pasted into it. At 1280 and 390 px, axe clean,
// never wider than the screen.

interface Device {
  uid: string;
  name: string;
  status: string;
}

describe('web console: install keys in the namespace settings', function () {
  this.timeout(180_000);
  let signedIn: SignedInConsole | undefined;
  let server: ConsoleServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let auth: { token: string; tenant: string };
  let scratch: string;
  let agent: AgentProcess | undefined;
  let key = '';

  const api = (p: string, init: RequestInit = {}) =>
    fetch(`${server.url}${p}`, {
      ...init,
      headers: {
        Authorization: `Bearer ${auth.token}`,
        ...(init.body ? { 'Content-Type': 'application/json' } : {}),
      },
    });
  const copied = async (label: string, scope: Page | ReturnType<Page['getByRole']> = page) => {
    await scope.getByRole('button', { name: `Copy ${label}` }).click();
    return (await page.evaluate('navigator.clipboard.readText()')) as string;
  };
  /** A registration of a new device with `installKey`, as an agent makes it. */
  const registerWith = async (installKey: string, label: string) => {
    const req = agentAuthRequest({
      tenant: auth.tenant,
      hostname: label,
      mac: `02:00:00:00:7e:${label.length}`,
      keyLabel: label,
    });
    return fetch(`${server.url}/api/devices/auth`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...req.headers },
      body: JSON.stringify({ ...req.body, install_key: installKey }),
    });
  };

  before(async () => {
    signedIn = await signedInConsole({ clipboard: true });
    ({ server, browser, context, page, auth } = signedIn);
    scratch = mkdtempSync(path.join(tmpdir(), 'gatehouse-install-keys-'));
  });
  after(async () => {
    await agent?.stop();
    await signedIn?.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('creates a key, shows it once with the install commands that carry it, and lists it without it', async () => {
    await page.goto(`${server.url}/settings/install-keys`);
    await page.getByRole('heading', { name: 'Namespace settings' }).waitFor();
    await page.getByText('No install keys').waitFor();
    await expectAccessible(page, 'install keys, none yet');

    await page.getByRole('button', { name: 'Create install key' }).click();
    const form = page.getByRole('dialog', { name: 'Create an install key' });
    await form.getByLabel('Name').fill('rack-7');
    await form.getByLabel('Expires after').selectOption('30');
    await form.getByLabel('Devices it may register').fill('2');
    await expectAccessible(page, 'create install key dialog');
    await form.getByRole('button', { name: 'Create key' }).click();

    const shown = page.getByRole('dialog', { name: 'Install key rack-7' });
    await shown.getByText('Copy the key now').waitFor();
    key = await shown.getByLabel('install key', { exact: true }).inputValue();
    expect(key).to.match(/^gik_[0-9a-f]{12}_[0-9a-f]{40}$/);
    expect(await copied('install key', shown)).to.equal(key);
    const command = await copied('install command', shown);
    expect(command).to.equal(
      `curl -fsSL "${server.url}/agent/install.sh" | GATEHOUSE_SERVER_ADDRESS="${server.url}" GATEHOUSE_TENANT_ID=${auth.tenant} GATEHOUSE_INSTALL_KEY=${key} sh`,
    );
    expect(await copied('docker run command', shown)).to.contain(
      `-e GATEHOUSE_TENANT_ID=${auth.tenant} -e GATEHOUSE_INSTALL_KEY=${key} `,
    );
    await expectAccessible(page, 'install key shown once');

    // Run as copied into a staging root (install.sh's own switches): the key goes into the agent's settings.
    const root = path.join(scratch, 'root');
    // As root, as the command is meant to run: install.sh uses sudo only when it is not root.
    const staged = command.replace('| ', `| GATEHOUSE_INSTALL_ROOT=${root} GATEHOUSE_NO_SYSTEMD=1 `);
    const run = spawnSync('sh', ['-c', staged], { encoding: 'utf8' });
    expect(run.status, run.stderr).to.equal(0);
    const settingsFile = path.join(root, 'etc/default/gatehouse-agent');
    expect(statSync(settingsFile).mode & 0o777).to.equal(0o600);
    const settings = readFileSync(settingsFile, 'utf8');
    expect(settings).to.contain(`GATEHOUSE_INSTALL_KEY=${key}\n`);
    expect(existsSync(path.join(root, 'usr/local/bin/gatehouse-agent'))).to.equal(true);

    await shown.getByRole('button', { name: 'Close' }).click();
    const row = page
      .getByRole('table', { name: 'Install keys' })
      .getByRole('row')
      .filter({ hasText: 'rack-7' });
    await row.getByText('0 of 2').waitFor();
    await row.getByText(`${key.slice(0, 16)}_…`).waitFor();
    const listed = (await (await api('/api/namespaces/install-keys')).json()) as Record<string, unknown>[];
    expect(listed).to.have.length(1);
    expect(listed[0]).to.not.have.property('key');
    expect(JSON.stringify(listed)).to.not.contain(key.slice(17));
  });

  it('requires a key for new devices, and the agent installed with the copied command registers with it', async () => {
    const requirement = 'Require an install key to register a new device';
    await page.getByRole('switch', { name: requirement }).click();
    await page.getByText('New devices now need an install key').waitFor();
    await page.getByRole('switch', { name: requirement, checked: true }).waitFor();
    const ns = (await (await api(`/api/namespaces/${auth.tenant}`)).json()) as {
      settings: { require_install_key: boolean };
    };
    expect(ns.settings.require_install_key).to.equal(true);

    // The installed agent, run from its install tree with the settings install.sh wrote, as its unit runs it.
    const root = path.join(scratch, 'root');
    const settings = Object.fromEntries(
      readFileSync(path.join(root, 'etc/default/gatehouse-agent'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    );
    agent = new AgentProcess(
      {
        ...settings,
        GATEHOUSE_PRIVATE_KEY: path.join(scratch, 'agent.key'),
        GATEHOUSE_PREFERRED_HOSTNAME: 'rack-7-node-1',
        GATEHOUSE_KEEPALIVE_INTERVAL: '1',
      },
      [],
      {
        executable: {
          path: path.join(root, 'usr/local/bin/gatehouse-agent'),
          runtimeDir: path.join(root, 'var/lib/gatehouse-agent/runtime'),
        },
      },
    );
    const log = () => agent?.lines.join('\n') ?? '';
    await eventually(
      async () => {
        const pending = (await (await api('/api/devices?status=pending')).json()) as Device[];
        return pending.find((d) => d.name === 'rack-7-node-1');
      },
      'the installed agent to register',
      40_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\nthe agent said:\n${log()}`);
    });
    expect(log()).to.contain('with an install key');
    expect(log()).to.not.contain(key.slice(17));
    await page.reload();
    await page
      .getByRole('table', { name: 'Install keys' })
      .getByRole('row')
      .filter({ hasText: 'rack-7' })
      .getByText('1 of 2')
      .waitFor();
    await expectAccessible(page, 'install keys, required, one key in use');
  });

  it("puts a pasted key into Home's install commands, and a placeholder until then", async () => {
    await page.goto(`${server.url}/`);
    const field = page.getByLabel('install command', { exact: true });
    await eventually(
      async () =>
        (await field.inputValue()).includes('GATEHOUSE_INSTALL_KEY=<install-key> sh') ? true : undefined,
      'the placeholder in the install command',
    );
    await page.getByLabel('Install key', { exact: true }).fill('not-a-key');
    await page.getByText('This is not an install key').waitFor();
    await page.getByLabel('Install key', { exact: true }).fill(key);
    expect(await copied('install command')).to.contain(`GATEHOUSE_INSTALL_KEY=${key} sh`);
    expect(await page.getByLabel('docker run command', { exact: true }).inputValue()).to.contain(
      `-e GATEHOUSE_INSTALL_KEY=${key} `,
    );
    await expectAccessible(page, 'home with an install key pasted');
  });

  it('rotates a key (the old text stops at once) and revokes it from its row', async () => {
    await page.goto(`${server.url}/settings/install-keys`);
    await page.getByRole('button', { name: 'Rotate rack-7' }).click();
    await page
      .getByRole('dialog', { name: 'Rotate rack-7?' })
      .getByRole('button', { name: 'Rotate' })
      .click();
    const shown = page.getByRole('dialog', { name: 'Install key rack-7' });
    const rotated = await shown.getByLabel('install key', { exact: true }).inputValue();
    expect(rotated).to.match(/^gik_/).and.not.equal(key);
    expect(await copied('install command', shown)).to.contain(`GATEHOUSE_INSTALL_KEY=${rotated} sh`);
    await shown.getByRole('button', { name: 'Close' }).click();
    expect((await registerWith(key, 'old-text')).status).to.equal(403);

    await page.getByRole('button', { name: 'Revoke rack-7' }).click();
    await page
      .getByRole('dialog', { name: 'Revoke rack-7?' })
      .getByRole('button', { name: 'Revoke' })
      .click();
    await page.getByText('Install key revoked').waitFor();
    await page.getByText('No install keys').waitFor();
    await page.getByText('No new device can register until you create one.').waitFor();
    expect((await registerWith(rotated, 'revoked-text')).status).to.equal(403);
    // The device the key registered stays.
    const pending = (await (await api('/api/devices?status=pending')).json()) as Device[];
    expect(pending.map((d) => d.name)).to.include('rack-7-node-1');
  });

  it('fits the screen and its dialogs at 390 px, axe clean', async () => {
    const created = await api('/api/namespaces/install-keys', {
      method: 'POST',
      body: JSON.stringify({ name: 'a-long-key-name-xyz', usage_limit: 1000, expires_at: null }),
    });
    expect(created.status).to.equal(200);
    const phone = await browser.newContext({
      viewport: { width: 390, height: 844 },
      isMobile: true,
      storageState: await context.storageState(),
    });
    try {
      const p = await phone.newPage();
      await p.goto(`${server.url}/settings/install-keys`);
      await p.getByRole('table', { name: 'Install keys' }).getByText('a-long-key-name-xyz').waitFor();
      await noWiderThanScreen(p, 'install keys at 390 px');
      await expectAccessible(p, 'install keys at 390 px');
      await p.getByRole('button', { name: 'Create install key' }).click();
      const form = p.getByRole('dialog', { name: 'Create an install key' });
      await form.getByLabel('Name').fill('phone-key');
      await form.getByRole('button', { name: 'Create key' }).click();
      const shown = p.getByRole('dialog', { name: 'Install key phone-key' });
      await shown.getByLabel('install command', { exact: true }).waitFor();
      await noWiderThanScreen(p, 'install key shown once at 390 px');
      await expectAccessible(p, 'install key shown once at 390 px');
    } finally {
      await phone.close();
    }
  });
});
