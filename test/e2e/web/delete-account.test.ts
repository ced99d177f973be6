import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { startSmtp, type TestSmtp } from '../../support/smtp';
import { completeSetup, expectAccessible, launchBrowser, signIn } from './support/browser';
import { confirmAddress, consoleSession, signUpFromSignIn } from './support/cloud';
import { type ConsoleServer, startConsoleServer } from './support/console-server';

const dora = { name: 'Dora Deleter', email: 'dora@example.com', username: 'dora', password: 'dora_secret-1' };

/**
 * Account settings, Delete account (cloud): the screen says what goes before anything happens, asks for the
 * password, and deletes exactly what it showed; a wrong password keeps everything.
 */
describe('web console (cloud): deleting your account asks for the password and says what goes', function () {
  this.timeout(120_000);
  let smtp: TestSmtp;
  let server: ConsoleServer;
  let browser: Browser;
  let page: Page;

  const api = (path: string, token: string, init: RequestInit = {}) =>
    fetch(`${server.url}${path}`, {
      ...init,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    });

  before(async () => {
    smtp = await startSmtp();
    [server, browser] = await Promise.all([
      startConsoleServer({ edition: 'cloud', env: { GATEHOUSE_SMTP_URL: smtp.url } }),
      launchBrowser(),
    ]);
    const first = await (await browser.newContext()).newPage();
    await completeSetup(first, server.setupUrl);
    await first.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    const mail = await signUpFromSignIn(page, server.url, smtp, dora);
    await confirmAddress(page, mail, dora.email);
    await signIn(page, server.url, dora.username, dora.password);
    await page.getByRole('button', { name: 'Namespace: No namespace. Change namespace' }).waitFor();
    const { token } = await consoleSession(page);
    const created = await api('/api/namespaces', token, {
      method: 'POST',
      body: JSON.stringify({ name: 'doras' }),
    });
    expect(created.status).to.equal(200);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await smtp?.stop();
  });

  it('lists what goes, refuses a wrong password, and deletes with the right one', async () => {
    const { token } = await consoleSession(page);
    await page.goto(`${server.url}/settings/delete-account`);
    await page.getByRole('heading', { name: 'Delete your account' }).waitFor();
    const owned = page.getByRole('list', { name: 'Namespaces deleted with the account' });
    await owned.getByText('doras').waitFor();
    expect(await owned.textContent()).to.contain('0 devices');
    await expectAccessible(page, 'delete account');

    await page.getByRole('button', { name: 'Delete account…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete your account?' });
    await dialog.getByLabel('Password').fill('not-my-password');
    await dialog.getByRole('button', { name: 'Delete my account' }).click();
    await dialog.getByText('The password is wrong.').waitFor();
    await expectAccessible(page, 'delete account dialog');
    expect((await api('/api/auth/user', token)).status, 'still there').to.equal(200);

    await dialog.getByLabel('Password').fill(dora.password);
    await dialog.getByRole('button', { name: 'Delete my account' }).click();
    await page.getByText('Your account was deleted.').waitFor();
    expect((await api('/api/auth/user', token)).status).to.equal(401);
    const again = await fetch(`${server.url}/api/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ username: dora.username, password: dora.password }),
    });
    expect(again.status).to.equal(401);
  });
});
