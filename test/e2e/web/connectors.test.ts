import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import type { AgentProcess } from '../../support/agent-process';
import { eventually } from '../../support/agent-process';
import { startConnectorProcess } from '../../support/connector';
import { CONTAINER_ACCOUNTS, type PodmanEngine, startPodman } from '../../support/podman';
import { completeSetup, expectAccessible, launchBrowser } from './support/browser';
import { type ConsoleServer, startConsoleServer } from './support/console-server';

// The enterprise console with a real engine (podman): adding a connector on the Connectors screen, running its
// process beside the engine with the token the screen shows, testing its connection, the engine's containers under Containers, and a container's web terminal in Chromium, signed in with
// the container account's password, following the window's size, and ending with the shell's exit status.
describe('console: connectors, containers and a container terminal (enterprise, podman)', function () {
  this.timeout(180_000);
  let engine: PodmanEngine;
  let server: ConsoleServer;
  let browser: Browser;
  let page: Page;
  let auth: { token: string; tenant: string };
  const processes: AgentProcess[] = [];
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
    for (const p of processes) await p.stop();
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

  /** Reads the token the "Run the connector" dialog shows, checks its commands, and closes it. */
  const takeToken = async () => {
    const run = page.getByRole('dialog', { name: 'Run the connector' });
    await run.waitFor();
    const token = await run.getByRole('textbox', { name: 'connector token' }).inputValue();
    expect(token).to.match(/^[0-9a-f-]{36}\.[A-Za-z0-9_-]{43}$/);
    for (const label of ['connector command', 'connector docker command']) {
      const command = await run.getByRole('textbox', { name: label }).inputValue();
      expect(command, label).to.contain(`GATEHOUSE_CONNECTOR_TOKEN=${token}`);
      expect(command, label).to.contain(`GATEHOUSE_SERVER_ADDRESS="${server.url}"`);
      expect(command, label).to.match(/gatehouse-agent(:[0-9.]+)? connector$/);
    }
    await expectAccessible(page, 'run the connector dialog');
    await page.keyboard.press('Escape');
    await run.waitFor({ state: 'hidden' });
    return token;
  };

  it('adds a connector, shows its token once, and connects once its process runs beside the engine', async () => {
    await page.getByRole('navigation', { name: 'Primary' }).getByRole('link', { name: 'Connectors' }).click();
    await page.getByRole('heading', { name: 'Connectors', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Add connector' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a connector' });
    // Where the engine is is the connector process's to say: the form asks no address.
    expect(await dialog.getByLabel('Address').count()).to.equal(0);
    expect(await dialog.getByLabel('CA certificate').count()).to.equal(0);
    await dialog.getByRole('button', { name: 'Add connector' }).click();
    const token = await takeToken();
    const waiting = page.getByRole('row', { name: /not connected yet/ });
    await waiting.getByText('Not connected', { exact: true }).waitFor();

    processes.push(
      await startConnectorProcess({ server: server.url, token, engine: `tcp://127.0.0.1:${engine.port}` }),
    );
    const row = page.getByRole('row', { name: new RegExp(`127\\.0\\.0\\.1:${engine.port}`) });
    await eventually(
      async () => {
        await page.reload();
        await page.getByRole('heading', { name: 'Connectors', exact: true }).waitFor();
        return (await row.getByText('Connected', { exact: true }).count()) > 0 || undefined;
      },
      'the connector to show connected',
      20_000,
    );
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

  it('says when a connector cannot reach its engine, and makes a new token', async () => {
    await page.getByRole('button', { name: 'Add connector' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a connector' });
    await dialog.getByLabel(/^Enabled/).uncheck();
    await dialog.getByRole('button', { name: 'Add connector' }).click();
    const token = await takeToken();
    const away = await startConnectorProcess({ server: server.url, token, engine: 'tcp://127.0.0.1:1' });
    processes.push(away);
    const row = page.getByRole('row', { name: /127\.0\.0\.1:1\b/ });
    await eventually(
      async () => {
        await page.reload();
        await page.getByRole('heading', { name: 'Connectors', exact: true }).waitFor();
        return (await row.count()) > 0 || undefined;
      },
      'the unreachable connector’s row',
      20_000,
    );
    await row.getByRole('button', { name: /Test connection/ }).click();
    await page
      .getByText('Connection tested, but the engine did not answer: the connector could not reach its engine')
      .waitFor();

    await row.getByRole('button', { name: /New token/ }).click();
    const confirm = page.getByRole('dialog', { name: 'Make a new token?' });
    await confirm.getByRole('button', { name: 'New token' }).click();
    const fresh = await takeToken();
    expect(fresh).to.not.equal(token);
    await away.waitFor(/refused this connector \(401\)/);
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
