import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { AgentProcess, eventually } from '../../support/agent-process';
import { expectAccessible, noWiderThanScreen, signIn, tableShowsDevices } from './support/browser';
import type { ConsoleServer } from './support/console-server';
import {
  addTeam,
  ownerApi,
  registerInConsole,
  type SignedInConsole,
  signedInConsole,
  team,
} from './support/signed-in';

// Fleet tools on the device list: five devices (a real agent online, four registered through the agent's own call,
// offline), filtered by tag, operating system and online state, searched by name, tag and address, with the
// filters kept in the address; counts in the tabs; bulk accept (one refused, listed by name), tag and remove; rows
// that fit at 1280 px and cards at 390 px; an operator's and an observer's view of the same list.

const alpine = { id: 'alpine', pretty_name: 'Alpine Linux v3.20' };

describe('web console: fleet tools on the device list', function () {
  this.timeout(300_000);
  let signedIn: SignedInConsole | undefined;
  let server: ConsoleServer;
  let page: Page;
  let auth: { token: string; tenant: string };
  let agent: AgentProcess | undefined;
  let keys = '';
  const uids: Record<string, string> = {};

  let api: ReturnType<typeof ownerApi>;
  const register = (hostname: string, mac: string, os?: { id: string; pretty_name: string }) =>
    registerInConsole({ server, auth }, { hostname, mac, keyLabel: `${hostname}-${mac}`, os });

  const shows = tableShowsDevices;
  const tabCount = async (p: Page, label: string) =>
    (await p
      .getByRole('navigation', { name: 'Devices by status' })
      .getByRole('link', { name: label })
      .textContent()) ?? '';

  before(async () => {
    signedIn = await signedInConsole({
      server: { env: { GATEHOUSE_PENDING_PER_SOURCE: '100', GATEHOUSE_PENDING_PER_BLOCK: '100' } },
    });
    ({ server, page, auth } = signedIn);
    api = ownerApi(signedIn);
    keys = mkdtempSync(path.join(tmpdir(), 'gatehouse-fleet-agent-'));
    agent = AgentProcess.device({
      server: server.url,
      tenant: auth.tenant,
      keyPath: path.join(keys, 'device.key'),
      identity: '02:00:00:00:00:44',
      hostname: 'edge-live',
    });
    await agent.waitFor(/pending acceptance/, 30_000);
    uids['edge-live'] = await agent.uid();
    await api('PATCH', `/api/devices/${uids['edge-live']}/accept`);
    uids['web-1'] = await register('web-1', '02:00:00:00:93:01');
    uids['db-1'] = await register('db-1', '02:00:00:00:93:02', alpine);
    uids['cache-1'] = await register('cache-1', '02:00:00:00:93:03', alpine);
    // Another agent calling itself web-1: accepting it clashes with the accepted web-1.
    uids['web-1 again'] = await register('web-1', '02:00:00:00:93:04');
    await api('PATCH', `/api/devices/${uids['web-1']}/accept`);
    await api('PATCH', `/api/devices/${uids['db-1']}/accept`);
    await api('PUT', `/api/devices/${uids['web-1']}/tags`, { tags: ['production'] });
    await addTeam(signedIn);
    await eventually(
      async () => ((await api('GET', `/api/devices/${uids['edge-live']}`)).online ? true : undefined),
      'edge-live online',
      30_000,
    );
  });
  after(async () => {
    await agent?.stop();
    await signedIn?.close();
    if (keys) rmSync(keys, { recursive: true, force: true });
  });

  it('counts devices in the tabs', async () => {
    await page.goto(`${server.url}/devices`);
    await shows(page, 'Accepted devices', ['edge-live', 'web-1', 'db-1']);
    // The counts arrive after the tabs, all at once.
    await eventually(
      async () => (/\d$/.test(await tabCount(page, 'Accepted')) ? true : undefined),
      'the tab counts',
    );
    expect(await tabCount(page, 'Accepted')).to.equal('Accepted3');
    expect(await tabCount(page, 'Pending')).to.equal('Pending2');
    expect(await tabCount(page, 'Rejected')).to.equal('Rejected0');
  });

  it('filters by tag, operating system and online state, keeps the filters over a reload, and clears them', async () => {
    const table = 'Accepted devices';
    await page.getByRole('combobox', { name: 'Tag', exact: true }).selectOption('production');
    await shows(page, table, ['web-1']);
    expect(new URL(page.url()).searchParams.get('tag')).to.equal('production');
    await page.reload();
    await shows(page, table, ['web-1']);
    expect(await page.getByRole('combobox', { name: 'Tag', exact: true }).inputValue()).to.equal(
      'production',
    );
    await page.getByRole('button', { name: 'Clear filters' }).first().click();
    await shows(page, table, ['edge-live', 'web-1', 'db-1']);
    expect(new URL(page.url()).search).to.equal('');

    const os = page.getByRole('combobox', { name: 'Operating system' });
    expect(await os.locator('option').allTextContents()).to.include('Alpine Linux v3.20 (1)');
    await os.selectOption('alpine');
    await shows(page, table, ['db-1']);
    await os.selectOption('');

    const online = page.getByRole('combobox', { name: 'Online state' });
    await online.selectOption('online');
    await shows(page, table, ['edge-live']);
    await online.selectOption('offline');
    await shows(page, table, ['web-1', 'db-1']);
    // Filters combine: offline and Alpine.
    await os.selectOption('alpine');
    await shows(page, table, ['db-1']);
    await page.getByRole('button', { name: 'Clear filters' }).first().click();
    await shows(page, table, ['edge-live', 'web-1', 'db-1']);
  });

  it('searches name, tag and address on the server', async () => {
    const table = 'Accepted devices';
    const search = page.getByLabel('Search devices by name, tag or address');
    await search.fill('db-');
    await shows(page, table, ['db-1']);
    await search.fill('production');
    await shows(page, table, ['web-1']);
    // Every device here dials in from the loopback address.
    await search.fill('127.0.0');
    await shows(page, table, ['edge-live', 'web-1', 'db-1']);
    await search.fill('no-such-device');
    await page.getByText('No devices match these filters').waitFor();
    await page.reload();
    expect(await page.getByLabel('Search devices by name, tag or address').inputValue()).to.equal(
      'no-such-device',
    );
    await page.getByRole('button', { name: 'Clear filters' }).first().click();
    await shows(page, table, ['edge-live', 'web-1', 'db-1']);
  });

  it('fits every row and its actions at 1280 px without scrolling sideways', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${server.url}/devices`);
    await shows(page, 'Accepted devices', ['edge-live', 'web-1', 'db-1']);
    for (const name of ['edge-live', 'web-1', 'db-1']) {
      for (const action of [`Connect to ${name}`, `Rename ${name}`, `Remove ${name}`]) {
        // The list reloads while accepted devices wait for their agent: a row may be re-rendered under the look-up.
        const target = page
          .getByRole('link', { name: action })
          .or(page.getByRole('button', { name: action }));
        const box = await eventually(async () => (await target.boundingBox()) ?? undefined, action, 10_000);
        expect(box.x + box.width, `${action} right edge`).to.be.at.most(1280);
      }
    }
    const frame = (await page.evaluate(
      '[...document.querySelectorAll(".table-wrap")].map((f) => f.scrollWidth - f.clientWidth)',
    )) as number[];
    expect(Math.max(...frame), 'the table scrolls sideways').to.be.at.most(1);
    await noWiderThanScreen(page, 'accepted devices at 1280 px');
    await expectAccessible(page, 'accepted devices at 1280 px');
  });

  it('shows a card per device at 390 px with its status, name, address and actions on screen', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      for (const [tab, name, action] of [
        ['/devices', 'edge-live', 'Connect to edge-live'],
        ['/devices/pending', 'cache-1', 'Accept cache-1'],
      ] as const) {
        await page.goto(`${server.url}${tab}`);
        const card = page.locator('tbody tr').filter({ hasText: name });
        await card.waitFor();
        expect(await card.textContent()).to.match(/127\.0\.0\.1/);
        expect(await card.textContent()).to.match(/Online|Pending/);
        const target = card.getByRole(tab === '/devices' ? 'link' : 'button', { name: action });
        const box = await eventually(async () => (await target.boundingBox()) ?? undefined, action, 10_000);
        expect(box.x, `${action} left edge`).to.be.at.least(0);
        expect(box.x + box.width, `${action} right edge`).to.be.at.most(390);
        await noWiderThanScreen(page, `${tab} at 390 px`);
        await expectAccessible(page, `${tab} at 390 px`);
      }
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  it('shows an operator bulk tagging but not accepting, and an observer no selection at all', async () => {
    for (const role of ['operator', 'observer'] as const) {
      const context = await signedIn!.browser.newContext({ viewport: { width: 1280, height: 900 } });
      const p = await context.newPage();
      try {
        await signIn(p, server.url, team[role].username, team[role].password);
        await p.getByRole('heading', { name: /^Welcome/ }).waitFor();
        await p.goto(`${server.url}/devices/pending`);
        await shows(p, 'Pending devices', ['cache-1', 'web-1']);
        const selectAll = p.getByRole('checkbox', { name: 'Select every device on this page' });
        if (role === 'observer') {
          expect(await selectAll.count()).to.equal(0);
          expect(await p.getByRole('checkbox').count()).to.equal(0);
        } else {
          await selectAll.check();
          const accept = p.getByRole('button', { name: 'Accept selected' });
          expect(await accept.isDisabled()).to.equal(true);
          expect(await accept.getAttribute('title')).to.equal(
            'Only owners and administrators can accept devices',
          );
          expect(await p.getByRole('button', { name: 'Remove selected' }).isDisabled()).to.equal(true);
          expect(await p.getByRole('button', { name: 'Add tag' }).isEnabled()).to.equal(true);
        }
        await expectAccessible(p, `pending devices as ${role}`);
      } finally {
        await context.close();
      }
    }
  });

  it('accepts the pending devices in bulk and lists the one refused by name', async () => {
    await page.goto(`${server.url}/devices/pending`);
    await shows(page, 'Pending devices', ['cache-1', 'web-1']);
    await page.getByRole('checkbox', { name: 'Select every device on this page' }).check();
    await page.getByText('2 devices selected').waitFor();
    await page.getByRole('button', { name: 'Accept selected' }).click();
    const refused = page.getByRole('alert').filter({ hasText: 'Accepted: 1 done, 1 could not be changed' });
    await refused.waitFor();
    expect(await refused.textContent()).to.match(/web-1: .*name/i);
    await shows(page, 'Pending devices', ['web-1']);
    expect((await api('GET', `/api/devices/${uids['cache-1']}`)).status).to.equal('accepted');
    expect((await api('GET', `/api/devices/${uids['web-1 again']}`)).status).to.equal('pending');
    await eventually(
      async () => ((await tabCount(page, 'Accepted')) === 'Accepted4' ? true : undefined),
      'count 4',
    );
    expect(await tabCount(page, 'Pending')).to.equal('Pending1');
  });

  it('tags the accepted devices in bulk', async () => {
    await page.goto(`${server.url}/devices`);
    await shows(page, 'Accepted devices', ['edge-live', 'web-1', 'db-1', 'cache-1']);
    await page.getByRole('checkbox', { name: 'Select db-1' }).check();
    await page.getByRole('checkbox', { name: 'Select cache-1' }).check();
    await page.getByRole('checkbox', { name: 'Select web-1' }).check();
    await page.getByRole('button', { name: 'Add tag' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a tag to 3 devices' });
    await dialog.getByLabel('Tag').fill('fleet');
    await dialog.getByRole('button', { name: 'Add tag' }).click();
    await page.getByText('Tagged fleet: 3 devices').waitFor();
    for (const name of ['db-1', 'cache-1', 'web-1'])
      expect((await api('GET', `/api/devices/${uids[name]}`)).tags).to.include('fleet');
    expect((await api('GET', `/api/devices/${uids['edge-live']}`)).tags).to.not.include('fleet');
    expect((await api('GET', `/api/devices/${uids['web-1']}`)).tags).to.deep.equal(['production', 'fleet']);
  });

  it('removes in bulk after one confirmation naming how many, then points the empty tab to the waiting device', async () => {
    await page.goto(`${server.url}/devices?tag=fleet`);
    await shows(page, 'Accepted devices', ['web-1', 'db-1', 'cache-1']);
    await page.getByRole('checkbox', { name: 'Select every device on this page' }).check();
    await page.getByRole('button', { name: 'Remove selected' }).click();
    const dialog = page.getByRole('dialog', { name: 'Remove 3 devices?' });
    await dialog.getByRole('button', { name: 'Remove 3 devices' }).click();
    await page.getByText('Removed: 3 devices').waitFor();
    for (const name of ['db-1', 'cache-1', 'web-1'])
      expect((await api('GET', `/api/devices/${uids[name]}`)).status).to.equal('removed');

    await api('DELETE', `/api/devices/${uids['edge-live']}`);
    await agent?.stop();
    await page.goto(`${server.url}/devices`);
    await page.getByText('No accepted devices yet').waitFor();
    await page.getByText('1 device waits under Pending').waitFor();
    expect(await page.getByText('Install the agent on a machine').count()).to.equal(0);
    await expectAccessible(page, 'accepted devices, empty, one waiting');
    await page.getByRole('link', { name: 'Review pending devices' }).click();
    await shows(page, 'Pending devices', ['web-1']);
  });
});
