import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { eventually } from '../../support/agent-process';
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

// Custom device fields in the console: added, edited and removed on the device page (with the rules said before
// the server is asked), shown as a list column the list sorts by and filters on, kept in the address; an observer
// sees them and cannot change them; the page fits at 1280 and 390 px.

describe('web console: custom device fields', function () {
  this.timeout(180_000);
  let signedIn: SignedInConsole | undefined;
  let server: ConsoleServer;
  let page: Page;
  let api: ReturnType<typeof ownerApi>;
  const uids: Record<string, string> = {};
  const fieldsOf = async (name: string) =>
    (await api('GET', `/api/devices/${uids[name]}`)).custom_fields as Record<string, string>;

  before(async () => {
    signedIn = await signedInConsole({});
    ({ server, page } = signedIn);
    api = ownerApi(signedIn);
    for (const [i, name] of ['web-1', 'web-2', 'db-1'].entries()) {
      uids[name] = await registerInConsole(signedIn, { hostname: name, mac: `02:00:00:00:95:0${i}` });
      await api('PATCH', `/api/devices/${uids[name]}/accept`);
    }
    await api('PUT', `/api/devices/${uids['web-2']}/custom_fields/owner`, { value: 'team-b' });
    await addTeam(signedIn);
  });
  after(async () => signedIn?.close());

  it('adds, edits and removes a field on the device page', async () => {
    await page.goto(`${server.url}/device/${uids['web-1']}`);
    const card = page.locator('.card').filter({ has: page.getByRole('heading', { name: 'Custom fields' }) });
    await card.getByText('No custom fields').waitFor();
    await card.getByRole('button', { name: 'Add field' }).click();
    const add = page.getByRole('dialog', { name: 'Add a custom field' });
    await add.getByLabel('Field').fill("o'wner");
    await add.getByText('A field name holds letters, digits').waitFor();
    await add.getByLabel('Field').fill('owner');
    await add.getByLabel('Value').fill('v'.repeat(257));
    await add.getByText('A value has at most 256 characters (this one has 257).').waitFor();
    await add.getByRole('button', { name: 'Add field' }).click();
    expect(await add.isVisible(), 'a value over the limit is not sent').to.equal(true);
    await add.getByLabel('Value').fill('team-a');
    await add.getByRole('button', { name: 'Add field' }).click();
    await card.getByRole('cell', { name: 'team-a' }).waitFor();
    expect(await fieldsOf('web-1')).to.deep.equal({ owner: 'team-a' });

    await card.getByRole('button', { name: 'Edit owner' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit owner' });
    await edit.getByLabel('Value').fill('team-c');
    await edit.getByRole('button', { name: 'Save' }).click();
    await card.getByRole('cell', { name: 'team-c' }).waitFor();
    expect(await fieldsOf('web-1')).to.deep.equal({ owner: 'team-c' });
    await expectAccessible(page, 'device page with a custom field');

    await card.getByRole('button', { name: 'Add field' }).click();
    await add.getByLabel('Field').fill('rack');
    await add.getByLabel('Value').fill('r-7');
    await add.getByRole('button', { name: 'Add field' }).click();
    await card.getByRole('cell', { name: 'r-7' }).waitFor();
    await card.getByRole('button', { name: 'Remove rack' }).click();
    await page.getByRole('dialog', { name: 'Remove rack?' }).getByRole('button', { name: 'Remove' }).click();
    await eventually(
      async () => ((await card.getByRole('cell', { name: 'r-7' }).count()) === 0 ? true : undefined),
      'rack removed',
    );
    expect(await fieldsOf('web-1')).to.deep.equal({ owner: 'team-c' });
  });

  it('shows a field as a list column, sorts by it and filters on it, with both kept in the address', async () => {
    const table = 'Accepted devices';
    await page.goto(`${server.url}/devices`);
    await tableShowsDevices(page, table, ['web-1', 'web-2', 'db-1']);
    const column = page.getByRole('combobox', { name: 'Custom field column' });
    await eventually(
      async () => ((await column.locator('option').allTextContents()).includes('owner') ? true : undefined),
      'owner offered',
    );
    await column.selectOption('owner');
    const header = page.getByRole('columnheader', { name: 'owner' });
    await header.waitFor();
    const order = async () =>
      (await page.locator('tbody tr a[href^="/device/"]:not([href$="/terminal"])').allTextContents()).filter(
        (t) => t.length > 0,
      );
    await header.getByRole('button').click();
    const expectOrder = (want: string[]) =>
      eventually(
        async () => (JSON.stringify(await order()) === JSON.stringify(want) ? true : undefined),
        want.join(),
      );
    // Devices without the field first ascending, then by value.
    await expectOrder(['db-1', 'web-2', 'web-1']);
    await header.getByRole('button').click();
    await expectOrder(['web-1', 'web-2', 'db-1']);

    await page.getByRole('searchbox', { name: 'owner contains' }).fill('TEAM-C');
    await tableShowsDevices(page, table, ['web-1']);
    await eventually(
      async () => (new URL(page.url()).searchParams.get('value') === 'TEAM-C' ? true : undefined),
      'value in the address',
    );
    expect(new URL(page.url()).searchParams.get('field')).to.equal('owner');
    await page.reload();
    await tableShowsDevices(page, table, ['web-1']);
    expect(await page.getByRole('searchbox', { name: 'owner contains' }).inputValue()).to.equal('TEAM-C');
    await expectAccessible(page, 'device list with a custom field column');
    await page.getByRole('button', { name: 'Clear filters' }).first().click();
    await tableShowsDevices(page, table, ['web-1', 'web-2', 'db-1']);
    expect(new URL(page.url()).search).to.equal('');
  });

  it('shows an observer the fields without a way to change them', async () => {
    const context = await signedIn!.browser.newContext({ viewport: { width: 1280, height: 900 } });
    const p = await context.newPage();
    try {
      await signIn(p, server.url, team.observer.username, team.observer.password);
      await p.getByRole('heading', { name: /^Welcome/ }).waitFor();
      await p.goto(`${server.url}/device/${uids['web-2']}`);
      const card = p.locator('.card').filter({ has: p.getByRole('heading', { name: 'Custom fields' }) });
      await card.getByRole('cell', { name: 'team-b' }).waitFor();
      for (const name of ['Add field', 'Edit owner', 'Remove owner']) {
        const button = card.getByRole('button', { name });
        expect(await button.isDisabled(), name).to.equal(true);
        expect(await button.getAttribute('title'), name).to.match(
          /^Only .* can change the custom fields of devices$/,
        );
      }
      await expectAccessible(p, 'device page as observer');
    } finally {
      await context.close();
    }
  });

  it('fits the device page with its fields at 390 px', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await api('PUT', `/api/devices/${uids['web-1']}/custom_fields/asset.number`, {
        value: 'A'.repeat(256),
      });
      await page.goto(`${server.url}/device/${uids['web-1']}`);
      await page.getByRole('cell', { name: 'asset.number', exact: true }).waitFor();
      await noWiderThanScreen(page, 'device page at 390 px');
      await expectAccessible(page, 'device page at 390 px');
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });
});
