import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { AgentProcess, eventually } from '../../support/agent-process';
import { expectAccessible } from './support/browser';
import type { ConsoleServer } from './support/console-server';
import { type SignedInConsole, signedInConsole } from './support/signed-in';

/**
 * Between Accept and its agent's tunnel the console says "Waiting for the agent", not "Offline",
 * and turns "Online" by itself. The agent is stopped before the acceptance and started after it, so the waiting
 * state lasts long enough to be seen whatever the machine's speed.
 */
describe('web console: waiting for the agent between Accept and online', function () {
  this.timeout(120_000);
  let signedIn: SignedInConsole | undefined;
  let server: ConsoleServer;
  let browser: Browser;
  let page: Page;
  let keys: string;
  let auth: { token: string; tenant: string; user: string };
  const agents: AgentProcess[] = [];

  const agent = (name: string, mac: string) => {
    const a = AgentProcess.device({
      server: server.url,
      tenant: auth.tenant,
      keyPath: path.join(keys, `${name}.key`),
      identity: mac,
      hostname: name,
      keepalive: 30,
    });
    agents.push(a);
    return a;
  };
  const device = async (uid: string) =>
    (await (
      await fetch(`${server.url}/api/devices/${uid}`, { headers: { Authorization: `Bearer ${auth.token}` } })
    ).json()) as { status: string; online: boolean };
  /** Registers, then stops: the device is pending and nobody is there to come online yet. */
  const registerAndStop = async (name: string, mac: string) => {
    const a = agent(name, mac);
    await a.waitFor(/pending acceptance/);
    const uid = await a.uid();
    await a.stop();
    return uid;
  };

  before(async () => {
    signedIn = await signedInConsole();
    ({ server, browser, page, auth } = signedIn);
    keys = mkdtempSync(path.join(tmpdir(), 'gatehouse-web-accept-'));
  });
  after(async () => {
    await Promise.all(agents.map((a) => a.stop()));
    await signedIn?.close();
    if (keys) rmSync(keys, { recursive: true, force: true });
  });

  it('says "Waiting for the agent" on the device page after Accept, then "Online" without a reload', async () => {
    const uid = await registerAndStop('late-agent', '02:00:00:00:40:01');
    await page.goto(`${server.url}/device/${uid}`);
    await page.getByRole('heading', { name: 'late-agent' }).waitFor();
    await page.getByRole('button', { name: 'Accept' }).click();
    await page.getByText('late-agent accepted').waitFor();
    const alert = page.getByText('Waiting for the agent', { exact: true }).first();
    await alert.waitFor();
    expect(await page.getByText('Offline', { exact: true }).count()).to.equal(0);
    expect((await device(uid)).status).to.equal('accepted');
    await expectAccessible(page, 'device waiting for its agent');

    // The agent starts: the page, which nobody reloads, turns Online.
    agent('late-agent', '02:00:00:00:40:01');
    await page.getByText('Online', { exact: true }).first().waitFor({ timeout: 20_000 });
    await page.getByText('Waiting for the agent', { exact: true }).waitFor({ state: 'detached' });
    expect((await device(uid)).online).to.equal(true);
  });

  it('shows the waiting state in the devices list after Accept there', async () => {
    const uid = await registerAndStop('list-agent', '02:00:00:00:40:02');
    await page.goto(`${server.url}/devices/pending`);
    await page.getByRole('button', { name: 'Accept list-agent' }).click();
    await page.getByText('list-agent accepted').waitFor();
    await page.goto(`${server.url}/devices`);
    const row = page.getByRole('row').filter({ hasText: 'list-agent' });
    await row.getByText('Waiting for the agent').waitFor();
    await expectAccessible(page, 'accepted devices with one waiting');
    agent('list-agent', '02:00:00:00:40:02');
    await row.getByText('Online', { exact: true }).waitFor({ timeout: 20_000 });
    await eventually(async () => ((await device(uid)).online ? true : undefined), 'online');
  });

  it('calls a device that never came online "Offline" once the waiting window has passed', async () => {
    const uid = await registerAndStop('gone-agent', '02:00:00:00:40:03');
    await fetch(`${server.url}/api/devices/${uid}/accept`, {
      method: 'PATCH',
      headers: { Authorization: `Bearer ${auth.token}` },
    });
    const fresh = await browser.newPage();
    try {
      await fresh.clock.install();
      await fresh.goto(`${server.url}/`);
      await fresh.evaluate((a) => localStorage.setItem('gatehouse.auth', a), JSON.stringify(auth));
      await fresh.goto(`${server.url}/device/${uid}`);
      await fresh.getByText('Waiting for the agent', { exact: true }).first().waitFor();
      await fresh.clock.fastForward(61_000);
      await fresh.getByText('Offline', { exact: true }).first().waitFor();
      expect(await fresh.getByText('Waiting for the agent', { exact: true }).count()).to.equal(0);
    } finally {
      await fresh.close();
    }
  });
});
