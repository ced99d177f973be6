import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { AgentProcess } from '../../support/agent-process';
import { owner, signIn } from './support/browser';
import type { ConsoleServer } from './support/console-server';
import { type SignedInConsole, signedInConsole } from './support/signed-in';

// Consoles left open on Home and on Devices hear of a new device and of its acceptance by server push, without a
// reload. Each wait is well under the 30 s the console polls at only while its stream is down, so a pass means the
// change came through the stream.
const PUSHED_MS = 10_000;

describe('web console: live changes without reload', function () {
  this.timeout(120_000);
  let signedIn: SignedInConsole | undefined;
  let server: ConsoleServer;
  let home: Page;
  let devices: Page;
  let elsewhere: BrowserContext | undefined;
  let keys: string;
  let agent: AgentProcess | undefined;

  before(async () => {
    signedIn = await signedInConsole();
    server = signedIn.server;
    home = signedIn.page;
    devices = await signedIn.context.newPage();
    keys = mkdtempSync(path.join(tmpdir(), 'gatehouse-web-live-'));
  });
  after(async () => {
    await agent?.stop();
    await elsewhere?.close();
    await signedIn?.close();
    if (keys) rmSync(keys, { recursive: true, force: true });
  });

  it('shows a newly registered device and its count on Home and Devices, then online after Accept elsewhere', async () => {
    await home.goto(`${server.url}/`);
    await home.getByRole('link', { name: /Waiting for approval\s*0/ }).waitFor();
    await devices.goto(`${server.url}/devices/pending`);
    await devices.getByText('Nothing waiting').waitFor();

    agent = AgentProcess.device({
      server: server.url,
      tenant: signedIn!.auth.tenant,
      keyPath: path.join(keys, 'device.key'),
      identity: '02:00:00:00:00:77',
      hostname: 'live-edge',
    });
    await agent.waitFor(/pending acceptance/);
    await home.getByRole('link', { name: /Waiting for approval\s*1/ }).waitFor({ timeout: PUSHED_MS });
    await home.getByTestId('pending-count').getByText('1').waitFor({ timeout: PUSHED_MS });
    await home
      .getByTestId('recent-devices')
      .getByRole('link', { name: 'live-edge' })
      .waitFor({ timeout: PUSHED_MS });
    const pending = devices.getByRole('table', { name: 'Pending devices' });
    await pending.getByText('live-edge').waitFor({ timeout: PUSHED_MS });

    // Another person's browser accepts it.
    elsewhere = await signedIn!.browser.newContext({ viewport: { width: 1280, height: 900 } });
    const other = await elsewhere.newPage();
    await signIn(other, server.url, owner.username, owner.password);
    await other.getByRole('heading', { name: /^Welcome/ }).waitFor();
    await other.goto(`${server.url}/devices/pending`);
    await other.getByRole('button', { name: 'Accept live-edge' }).click();
    await other.getByText('live-edge accepted').waitFor();

    await home.getByRole('link', { name: /Online now\s*1/ }).waitFor({ timeout: PUSHED_MS });
    await home.getByRole('link', { name: /Waiting for approval\s*0/ }).waitFor({ timeout: PUSHED_MS });
    await home.getByTestId('recent-devices').getByText('online').waitFor({ timeout: PUSHED_MS });
    await devices.getByText('Nothing waiting').waitFor({ timeout: PUSHED_MS });
  });
});
