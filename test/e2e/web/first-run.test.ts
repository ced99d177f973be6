import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { completeSetup, expectAccessible, launchBrowser, owner, signIn } from './support/browser';
import { type ConsoleServer, startConsoleServer } from './support/console-server';

describe('web console: first run and signing in', function () {
  this.timeout(60_000);
  let server: ConsoleServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  before(async () => {
    [server, browser] = await Promise.all([startConsoleServer(), launchBrowser()]);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });
  beforeEach(async () => {
    context = await browser.newContext();
    page = await context.newPage();
  });
  afterEach(async () => {
    await context?.close();
  });

  it('without the printed link, the first screen explains where the setup link comes from', async () => {
    await page.goto(server.url);
    await page.getByRole('heading', { name: 'Welcome to Gatehouse' }).waitFor();
    expect(await page.getByText('gatehouse serve').first().isVisible()).to.equal(true);
    await expectAccessible(page, 'setup explanation');
  });

  it('sets up the first account through the printed link and lands signed in on the home view', async () => {
    await page.goto(server.setupUrl);
    await page.getByLabel('Full name').waitFor();
    await expectAccessible(page, 'setup form');
    await completeSetup(page, server.setupUrl);
    await page.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
    expect(
      await page
        .getByRole('navigation', { name: 'Primary' })
        .getByRole('link', { name: 'Devices' })
        .isVisible(),
    ).to.equal(true);
    const info = (await (await fetch(`${server.url}/info`)).json()) as { setup: boolean };
    expect(info.setup).to.equal(true);
  });

  it('says the server is set up when the setup link is opened again', async () => {
    await page.goto(server.setupUrl);
    await page.getByRole('heading', { name: 'Gatehouse is set up' }).waitFor();
  });

  it('signs in with the username and stays signed in after a reload, then signs out', async () => {
    await signIn(page, server.url, owner.username, owner.password);
    await page.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
    await page.getByRole('button', { name: /Account menu/ }).click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Gatehouse' }).waitFor();
  });

  it('tells a person in plain words that the password is wrong', async () => {
    await page.goto(server.url);
    await expectAccessible(page, 'sign-in form');
    await signIn(page, server.url, owner.email, 'not-the-password');
    const alert = page.getByRole('alert').filter({ hasText: 'incorrect' });
    await alert.waitFor();
    expect(await alert.textContent()).to.equal('The username or password is incorrect.');
  });
});
