import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { expectAccessible, noWiderThanScreen, signIn } from './support/browser';
import type { ConsoleServer } from './support/console-server';
import { type SignedInConsole, signedInConsole } from './support/signed-in';

// The instance administrator's area: the setup user sees Instance (Users, Namespaces, Health) and
// creates, resets, disables and enables accounts there; a person who is not an instance administrator sees no
// such area and is told so at its addresses. At 1280 and 390 px, axe clean, never wider than the screen.

describe('web console: instance administration', function () {
  this.timeout(120_000);
  let signedIn: SignedInConsole | undefined;
  let server: ConsoleServer;
  let browser: Browser;
  let page: Page;

  const login = (username: string, password: string) =>
    fetch(`${server.url}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username, password }),
    });

  before(async () => {
    signedIn = await signedInConsole();
    ({ server, browser, page } = signedIn);
  });
  after(async () => {
    await signedIn?.close();
  });

  it('shows the setup user the Instance area, where they create a user', async () => {
    const nav = page.getByRole('navigation', { name: 'Primary' });
    await nav.getByText('Instance', { exact: true }).waitFor();
    await nav.getByRole('link', { name: 'Users' }).click();
    await page.getByRole('heading', { name: 'Users', exact: true }).waitFor();
    const table = page.getByRole('table', { name: 'Users' });
    await table.getByText('ada@example.com').waitFor();
    await expectAccessible(page, 'Instance users');
    await noWiderThanScreen(page, 'Instance users');

    await page.getByRole('button', { name: 'Create user' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create a user' });
    await dialog.getByLabel('Username').fill('bob');
    await dialog.getByLabel('E-mail').fill('bob@example.com');
    await dialog.getByLabel('Password').fill('bobs-secret');
    await expectAccessible(page, 'create user dialog');
    await dialog.getByRole('button', { name: 'Create user' }).click();
    await table.getByText('bob@example.com').waitFor();
    expect((await login('bob', 'bobs-secret')).status).to.equal(200);
  });

  it('disables and enables an account, and resets its password', async () => {
    const table = page.getByRole('table', { name: 'Users' });
    await page.getByRole('button', { name: 'Disable bob' }).click();
    await table.getByRole('row', { name: /bob/ }).getByText('Disabled').waitFor();
    expect((await login('bob', 'bobs-secret')).status, 'a disabled account cannot sign in').to.equal(403);
    await page.getByRole('button', { name: 'Enable bob' }).click();
    await table.getByRole('row', { name: /bob/ }).getByText('Active').waitFor();

    await page.getByRole('button', { name: 'Reset password for bob' }).click();
    const dialog = page.getByRole('dialog', { name: 'Reset the password of bob' });
    await dialog.getByLabel('New password').fill('new-secret');
    await expectAccessible(page, 'reset password dialog');
    await dialog.getByRole('button', { name: 'Set password' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect((await login('bob', 'bobs-secret')).status).to.equal(401);
    expect((await login('bob', 'new-secret')).status).to.equal(200);
    // The administrator's own row offers no way to lock themselves out.
    expect(await page.getByRole('button', { name: 'Disable ada' }).count()).to.equal(0);
  });

  it('lists every namespace and the server health', async () => {
    await page.getByRole('navigation', { name: 'Primary' }).getByRole('link', { name: 'Namespaces' }).click();
    const table = page.getByRole('table', { name: 'Namespaces' });
    await table.getByRole('row', { name: /ada/ }).waitFor();
    await expectAccessible(page, 'Instance namespaces');
    await page.getByRole('navigation', { name: 'Primary' }).getByRole('link', { name: 'Health' }).click();
    const facts = page.locator('[data-health]');
    await facts.getByText(/answers in/).waitFor();
    expect(await facts.textContent()).to.match(/Users2/);
    await expectAccessible(page, 'Instance health');
  });

  it('works at phone width: every Instance screen reachable from the menu, none wider than the screen', async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
    const p = await phone.newPage();
    try {
      await signIn(p, server.url, 'ada', 'correct-horse');
      await p.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
      for (const [link, check] of [
        ['Users', () => p.getByRole('table', { name: 'Users' }).getByText('bob@example.com').waitFor()],
        [
          'Namespaces',
          () => p.getByRole('table', { name: 'Namespaces' }).getByRole('row', { name: /ada/ }).waitFor(),
        ],
        [
          'Health',
          () =>
            p
              .locator('[data-health]')
              .getByText(/answers in/)
              .waitFor(),
        ],
      ] as const) {
        await p.getByRole('button', { name: 'Open menu' }).click();
        await p.getByRole('navigation', { name: 'Primary' }).getByRole('link', { name: link }).click();
        await check();
        await expectAccessible(p, `Instance ${link} at 390 px`);
        await noWiderThanScreen(p, `Instance ${link} at 390 px`);
      }
    } finally {
      await phone.close();
    }
  });

  it('shows no Instance area to a user who is not an instance administrator, and says so at its addresses', async () => {
    const other = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const p = await other.newPage();
    try {
      await signIn(p, server.url, 'bob', 'new-secret');
      await p.getByRole('navigation', { name: 'Primary' }).getByRole('link', { name: 'Account' }).waitFor();
      expect(
        await p.getByRole('navigation', { name: 'Primary' }).getByText('Instance', { exact: true }).count(),
      ).to.equal(0);
      await p.goto(`${server.url}/instance/users`);
      await p.getByText('This area is for instance administrators').waitFor();
      expect(await p.getByRole('table', { name: 'Users' }).count()).to.equal(0);
      await expectAccessible(p, 'Instance area refused');
    } finally {
      await other.close();
    }
  });
});
