import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { eventually } from '../../support/agent-process';
import { expectAccessible, noWiderThanScreen, tableShowsDevices } from './support/browser';
import type { ConsoleServer } from './support/console-server';
import { ownerApi, registerInConsole, type SignedInConsole, signedInConsole } from './support/signed-in';

// Removed and unused devices on the device list: a tab each with its count, rows that say the state and offer
// Accept (a removed device is not offered Remove again), accepting one back from its tab, the empty tab's text,
// and both tabs at 1280 and 390 px with axe.

describe('web console: removed and unused devices', function () {
  this.timeout(240_000);
  let signedIn: SignedInConsole | undefined;
  let server: ConsoleServer;
  let page: Page;
  let api: ReturnType<typeof ownerApi>;
  const uids: Record<string, string> = {};

  const shows = (table: string, expected: string[]) => tableShowsDevices(page, table, expected);
  const tabs = () => page.getByRole('navigation', { name: 'Devices by status' });

  before(async () => {
    signedIn = await signedInConsole();
    ({ server, page } = signedIn);
    api = ownerApi(signedIn);
    const register = (hostname: string, mac: string) =>
      registerInConsole(signedIn!, { hostname, mac, keyLabel: `${hostname}-${mac}` });
    uids.old = await register('old-router', '02:00:00:00:95:01');
    uids.spare = await register('spare-pi', '02:00:00:00:95:02');
    uids.stray = await register('stray-vm', '02:00:00:00:95:03');
    uids.shelf = await register('shelf-box', '02:00:00:00:95:04');
    // An accepted device removed (it keeps its slot), a pending one removed, and one set aside as unused.
    await api('PATCH', `/api/devices/${uids.old}/accept`);
    await api('DELETE', `/api/devices/${uids.old}`);
    await api('DELETE', `/api/devices/${uids.stray}`);
    await api('PATCH', `/api/devices/${uids.shelf}/unused`);
  });
  after(async () => {
    await signedIn?.close();
  });

  it('counts removed and unused devices in tabs of their own', async () => {
    await page.goto(`${server.url}/devices`);
    await tabs()
      .getByRole('link', { name: /^Unused\s*\d+$/ })
      .waitFor();
    const counts = await tabs().getByRole('link').allTextContents();
    expect(counts).to.deep.equal(['Accepted0', 'Pending1', 'Rejected0', 'Removed2', 'Unused1']);
  });

  it('lists removed devices with their state and Accept, without Remove, at 1280 px', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await tabs()
      .getByRole('link', { name: /^Removed/ })
      .click();
    await page.waitForURL(/\/devices\/removed$/);
    await shows('Removed devices', ['old-router', 'stray-vm']);
    expect(
      await tabs()
        .getByRole('link', { name: /^Removed/ })
        .getAttribute('aria-current'),
    ).to.equal('page');
    for (const name of ['old-router', 'stray-vm']) {
      const row = page.locator('tbody tr').filter({ hasText: name });
      expect(await row.locator('.badge').first().textContent()).to.equal('Removed');
      await row.getByRole('button', { name: `Accept ${name}` }).waitFor();
      expect(await row.getByRole('button', { name: `Remove ${name}` }).count()).to.equal(0);
    }
    await page.getByRole('checkbox', { name: 'Select every device on this page' }).check();
    await page.getByRole('button', { name: 'Accept selected' }).waitFor();
    expect(await page.getByRole('button', { name: 'Remove selected' }).count()).to.equal(0);
    await page.getByRole('button', { name: 'Clear selection' }).click();
    await noWiderThanScreen(page, 'removed devices at 1280 px');
    await expectAccessible(page, 'removed devices at 1280 px');
  });

  it('lists unused devices and shows them as cards at 390 px, with every tab reachable', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await page.goto(`${server.url}/devices/unused`);
      await shows('Unused devices', ['shelf-box']);
      const card = page.locator('tbody tr').filter({ hasText: 'shelf-box' });
      expect(await card.textContent()).to.match(/Unused/);
      const accept = card.getByRole('button', { name: 'Accept shelf-box' });
      const box = await eventually(async () => (await accept.boundingBox()) ?? undefined, 'Accept', 10_000);
      expect(box.x, 'Accept left edge').to.be.at.least(0);
      expect(box.x + box.width, 'Accept right edge').to.be.at.most(390);
      // The tabs scroll sideways inside their bar; the page itself does not.
      const unusedTab = tabs().getByRole('link', { name: /^Unused/ });
      // The counts arrive after the tabs (all at once) and widen them, which moves a tab scrolled into view before
      // them: scroll once the tabs have their counts.
      await tabs()
        .getByRole('link', { name: /^Unused\s*\d+$/ })
        .waitFor();
      await unusedTab.scrollIntoViewIfNeeded();
      const tabBox = await unusedTab.boundingBox();
      expect(tabBox && tabBox.x + tabBox.width, 'Unused tab right edge').to.be.at.most(390);
      await noWiderThanScreen(page, 'unused devices at 390 px');
      await expectAccessible(page, 'unused devices at 390 px');
      await page.goto(`${server.url}/devices/removed`);
      await shows('Removed devices', ['old-router', 'stray-vm']);
      await noWiderThanScreen(page, 'removed devices at 390 px');
      await expectAccessible(page, 'removed devices at 390 px');
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  it('accepts an unused device back from its tab, which then says it is empty', async () => {
    await page.goto(`${server.url}/devices/unused`);
    await shows('Unused devices', ['shelf-box']);
    await page.getByRole('button', { name: 'Accept shelf-box' }).click();
    await page.getByText('shelf-box accepted').waitFor();
    await page.getByText('No unused devices').waitFor();
    expect((await api('GET', `/api/devices/${uids.shelf}`)).status).to.equal('accepted');
    await expectAccessible(page, 'unused devices, empty');
  });

  it('accepts a removed device back from its tab', async () => {
    await page.goto(`${server.url}/devices/removed`);
    await shows('Removed devices', ['old-router', 'stray-vm']);
    await page.getByRole('button', { name: 'Accept old-router' }).click();
    await page.getByText('old-router accepted').waitFor();
    await shows('Removed devices', ['stray-vm']);
    expect((await api('GET', `/api/devices/${uids.old}`)).status).to.equal('accepted');
  });
});
