import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { eventually } from '../../integration/devices/agent-process';
import { CONTAINER_ACCOUNTS, type PodmanEngine, startPodman } from '../../support/podman';
import { completeSetup, expectAccessible, launchBrowser } from './support/browser';
import { type ConsoleServer, startConsoleServer } from './support/console-server';

// The enterprise console with a real engine (podman): adding a connector on the Connectors screen and testing its
// connection, the engine's containers under Containers, and a container's web terminal in Chromium, signed in with
// the container account's password, following the window's size, and ending with the shell's exit status.
describe('console: connectors, containers and a container terminal (enterprise, podman)', function () {
  this.timeout(180_000);
  let engine: PodmanEngine;
  let server: ConsoleServer;
  let browser: Browser;
  let page: Page;
  let auth: { token: string; tenant: string };
  const api = (p: string, init: RequestInit = {}) =>
    fetch(`${server.url}${p}`, {
      ...init,
      headers: {
        Authorization: `Bearer ${auth.token}`,
        ...(init.body ? { 'Content-Type': 'application/json' } : {}),
      },
    });

  before(async () => {
    [engine, server, browser] = await Promise.all([
      startPodman(),
      startConsoleServer({ edition: 'enterprise' }),
      launchBrowser(),
    ]);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    await completeSetup(page, server.setupUrl);
    await page.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
    auth = JSON.parse((await page.evaluate('localStorage.getItem("gatehouse.auth")')) as string);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await engine?.close();
  });

  /** The web terminal's screen and scrollback as lines, read from xterm's buffer. */
  const terminalLines = async () =>
    (await page.evaluate(`(() => {
      const term = document.querySelector('[data-testid="terminal"]')?.gatehouseTerminal;
      if (!term) return [];
      const buffer = term.buffer.active;
      const lines = [];
      for (let i = 0; i < buffer.length; i++) lines.push(buffer.getLine(i)?.translateToString(true) ?? '');
      return lines;
    })()`)) as string[];
  const terminalSize = async () =>
    (await page.evaluate(`(() => {
      const term = document.querySelector('[data-testid="terminal"]').gatehouseTerminal;
      return { cols: term.cols, rows: term.rows };
    })()`)) as { cols: number; rows: number };
  const terminalShows = (re: RegExp, what: string) =>
    eventually(
      async () => ((await terminalLines()).some((l) => re.test(l)) ? true : undefined),
      `the terminal to show ${what}`,
      20_000,
    );

  it('adds a connector, tells that it connected, and tests the connection again', async () => {
    await page.getByRole('navigation', { name: 'Primary' }).getByRole('link', { name: 'Connectors' }).click();
    await page.getByRole('heading', { name: 'Connectors', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Add connector' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a connector' });
    await dialog.getByLabel('Address').fill(engine.address);
    await dialog.getByLabel('Port').fill(String(engine.port));
    // No TLS for an engine on loopback: the TLS fields go with the switch.
    await dialog.getByLabel('Use TLS').uncheck();
    expect(await dialog.getByLabel('CA certificate').count()).to.equal(0);
    await dialog.getByRole('button', { name: 'Add connector' }).click();
    // Either outcome's toast first, so that a failure says what the engine answered.
    const added = page.getByText(/^Connector added/);
    await added.waitFor();
    expect(await added.textContent()).to.match(/^Connector added: connected to Podman Engine/);
    const row = page.getByRole('row', { name: new RegExp(`127\\.0\\.0\\.1:${engine.port}`) });
    await row.getByText('Connected', { exact: true }).waitFor();
    await expectAccessible(page, 'connectors');

    await row.getByRole('button', { name: /Test connection/ }).click();
    await page.getByText(/Connection tested: connected to Podman Engine/).waitFor();
    await row.getByRole('button', { name: /Engine details/ }).click();
    const details = page.getByRole('dialog', { name: /Engine at 127\.0\.0\.1/ });
    await details.getByText('Storage driver').waitFor();
    expect(await details.textContent()).to.contain('overlay');
    await page.keyboard.press('Escape');
    await details.waitFor({ state: 'hidden' });
  });

  it('says when a connector is saved but its engine does not answer', async () => {
    await page.getByRole('button', { name: 'Add connector' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a connector' });
    await dialog.getByLabel('Address').fill('127.0.0.1');
    await dialog.getByLabel('Port').fill('1');
    await dialog.getByLabel('Use TLS').uncheck();
    await dialog.getByLabel(/^Enabled/).uncheck();
    await dialog.getByRole('button', { name: 'Add connector' }).click();
    await page.getByText(/Connector added, but the engine did not answer: .*ECONNREFUSED/).waitFor();
    const row = page.getByRole('row', { name: /127\.0\.0\.1:1\b/ });
    await row.getByText('Not connected').waitFor();
  });

  it('lists a running container under Containers, accepts it, and opens its terminal', async () => {
    await engine.runContainer('web-box');
    await page.getByRole('navigation', { name: 'Primary' }).getByRole('link', { name: 'Containers' }).click();
    await page.getByRole('link', { name: 'Pending' }).click();
    // The engine's event reaches the server within a second or so; the list shows what the server has.
    await eventually(
      async () => {
        const pending = (await (await api('/api/containers?status=pending')).json()) as { name: string }[];
        return pending.some((c) => c.name === 'web-box') || undefined;
      },
      'web-box to be a pending container',
      20_000,
    );
    await page.reload();
    const accept = page.getByRole('button', { name: 'Accept web-box' });
    await accept.waitFor();
    await accept.click();
    await page.getByRole('link', { name: 'Accepted' }).click();
    await page.getByRole('link', { name: 'Connect to web-box' }).click();

    await page.getByRole('heading', { name: 'Sign in to web-box' }).waitFor();
    await page.getByLabel('Device user').fill('alice');
    await page.getByLabel('Device password').fill(CONTAINER_ACCOUNTS.alice);
    await page.getByRole('button', { name: 'Connect' }).click();
    await page.getByText('Connected as alice').waitFor({ timeout: 20_000 });

    const size = await terminalSize();
    await page.keyboard.type('stty size; id -un\n');
    await terminalShows(new RegExp(`^${size.rows} ${size.cols}$`), `stty size ${size.rows} ${size.cols}`);
    await terminalShows(/^alice$/, 'the account');

    // A smaller window: the terminal fits it and the container's TTY follows.
    await page.setViewportSize({ width: 900, height: 600 });
    await eventually(
      async () => ((await terminalSize()).cols < size.cols ? true : undefined),
      'the terminal to fit the smaller window',
      10_000,
    );
    await page.waitForTimeout(500);
    const smaller = await terminalSize();
    await page.keyboard.type('clear; stty size\n');
    await terminalShows(
      new RegExp(`^${smaller.rows} ${smaller.cols}$`),
      `stty size ${smaller.rows} ${smaller.cols}`,
    );

    await page.keyboard.type('exit 5\n');
    await page.getByText('The session ended (exit status 5).').waitFor({ timeout: 20_000 });

    const sessions = (await (await api('/api/sessions?per_page=100')).json()) as {
      type: string;
      username: string;
      authenticated: boolean;
    }[];
    expect(sessions.some((s) => s.type === 'web' && s.username === 'alice' && s.authenticated)).to.equal(
      true,
    );
  });

  it('deletes a connector after asking, and its containers stop being devices', async () => {
    await page.getByRole('navigation', { name: 'Primary' }).getByRole('link', { name: 'Connectors' }).click();
    const row = page.getByRole('row', { name: new RegExp(`127\\.0\\.0\\.1:${engine.port}`) });
    await row.getByRole('button', { name: /Delete/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this connector?' });
    await expectAccessible(page, 'delete connector dialog');
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('Connector deleted').waitFor();
    await row.waitFor({ state: 'detached' });
    // The unreachable one of the test before stays.
    await page.getByRole('row', { name: /127\.0\.0\.1:1\b/ }).waitFor();
    const containers = (await (await api('/api/containers?status=accepted')).json()) as { name: string }[];
    expect(containers.map((c) => c.name)).to.not.include('web-box');
  });
});
