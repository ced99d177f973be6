import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { TestIdp } from '../../support/saml-idp';
import { completeSetup, expectAccessible, launchBrowser, owner } from './support/browser';
import { type ConsoleServer, startConsoleServer } from './support/console-server';

// SAML single sign-on in the enterprise console: the instance administrator sets it up in Instance,
// Single sign-on from the IdP's metadata; then a person clicks "Sign in with SSO", signs in at the IdP (samlify, with
// a self-signed certificate made by openssl), and lands in the console signed in, created just in time. A refused
// answer is explained on the sign-in screen; an SSO-only instance shows no password form.

describe('web console: SAML single sign-on', function () {
  this.timeout(180_000);
  let server: ConsoleServer;
  let browser: Browser;
  let admin: BrowserContext;
  let page: Page;
  const idp = new TestIdp();

  const signOut = async (p: Page) => {
    await p.getByRole('button', { name: /Account menu/ }).click();
    await p.getByRole('button', { name: 'Sign out' }).click();
    await p.getByRole('heading', { name: 'Sign in to Gatehouse' }).waitFor();
  };

  before(async () => {
    [server, browser] = await Promise.all([startConsoleServer({ edition: 'enterprise' }), launchBrowser()]);
    await idp.listen(async () => (await fetch(`${server.url}/api/user/saml/metadata`)).text());
    admin = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await admin.newPage();
    await completeSetup(page, server.setupUrl);
    await page.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
  });
  after(async () => {
    await browser?.close();
    await idp.close();
    await server?.stop();
  });

  it('offers no SSO on the sign-in screen until it is set up', async () => {
    const other = await browser.newContext();
    const p = await other.newPage();
    await p.goto(server.url);
    await p.getByRole('heading', { name: 'Sign in to Gatehouse' }).waitFor();
    expect(await p.getByRole('button', { name: 'Sign in with SSO' }).count()).to.equal(0);
    await other.close();
  });

  it("is set up by the instance administrator from the IdP's metadata", async () => {
    const nav = page.getByRole('navigation', { name: 'Primary' });
    await nav.getByRole('link', { name: 'Single sign-on' }).click();
    await page.getByRole('heading', { name: 'Single sign-on', exact: true }).waitFor();
    const acs = page.getByRole('textbox', { name: 'Assertion consumer (ACS) address' });
    expect(await acs.inputValue()).to.equal(`${server.url}/api/user/saml/acs`);
    // Each address of this server is named on screen, not only for screen readers.
    for (const name of [
      'Entity ID (audience)',
      'Assertion consumer (ACS) address',
      'Metadata address of this server',
    ])
      await page.locator('.label', { hasText: name }).waitFor();
    await expectAccessible(page, 'single sign-on settings', { anyImpact: true });
    await page.getByRole('switch', { name: 'Enable single sign-on' }).check();
    await page.getByLabel('How Gatehouse learns about the identity provider').selectOption('metadata_xml');
    // A document that is not an IdP's metadata is refused, and the field says what it needs.
    await page.getByLabel('Metadata document').fill('<EntityDescriptor entityID="x"/>');
    await page.getByRole('button', { name: 'Save single sign-on' }).click();
    await page.getByText("This is not an identity provider's SAML metadata").waitFor();
    await page.getByLabel('Metadata document').fill(idp.metadata());
    await page.getByRole('button', { name: 'Save single sign-on' }).click();
    await page.locator('[data-saml-status]').getByText('On: the sign-in screen offers it').waitFor();
    await page.locator('[data-saml-status]').getByText(idp.entityId, { exact: false }).waitFor();
    const info = (await (await fetch(`${server.url}/info`)).json()) as { authentication: unknown };
    expect(info.authentication).to.deep.equal({ local: true, saml: true });
  });

  it('signs a new person in from the "Sign in with SSO" button back to a signed-in console', async () => {
    idp.person = { email: 'grace@example.com', name: 'Grace Hopper' };
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const p = await context.newPage();
    await p.goto(server.url);
    await p.getByRole('heading', { name: 'Sign in to Gatehouse' }).waitFor();
    await expectAccessible(p, 'sign-in with SSO', { anyImpact: true });
    const started = performance.now();
    await p.getByRole('button', { name: 'Sign in with SSO' }).click();
    await p.getByRole('heading', { name: 'Welcome, Grace' }).waitFor();
    const ms = performance.now() - started;
    console.log(
      `      SSO sign-in, button to signed-in console (browser, IdP on loopback): ${Math.round(ms)} ms`,
    );
    // The one-time code is gone from the address, and the console holds a token the API takes.
    expect(new URL(p.url()).hash).to.equal('');
    const stored = JSON.parse((await p.evaluate('localStorage.getItem("gatehouse.auth")')) as string) as {
      token: string;
      email: string;
    };
    expect(stored.email).to.equal('grace@example.com');
    const me = await fetch(`${server.url}/api/auth/user`, {
      headers: { Authorization: `Bearer ${stored.token}` },
    });
    expect(me.status).to.equal(200);
    expect(idp.requests.length).to.be.greaterThan(0);
    // Neither the token nor the code reached the server's log.
    expect(server.output()).not.to.include(stored.token);
    expect(server.output()).not.to.match(/#sso=|sso=[A-Za-z0-9_-]{20,}/);
    // A reload keeps the person signed in; the account was made just in time.
    await p.reload();
    await p.getByRole('heading', { name: 'Welcome, Grace' }).waitFor();
    await context.close();
  });

  it('tells the person when the IdP answer is refused, and signs no one in', async () => {
    idp.person = { email: 'mallory@example.com', audience: 'https://another-service.example/' };
    const context = await browser.newContext();
    const p = await context.newPage();
    await p.goto(server.url);
    await p.getByRole('button', { name: 'Sign in with SSO' }).click();
    await p
      .getByRole('alert')
      .filter({ hasText: 'Single sign-on did not go through: the identity provider addressed its answer' })
      .waitFor();
    expect(await p.evaluate('localStorage.getItem("gatehouse.auth")')).to.equal(null);
    await p.getByRole('heading', { name: 'Sign in to Gatehouse' }).waitFor();
    await context.close();
  });

  it('an SSO-only instance shows no password form, and the administrator still signs in through the IdP', async () => {
    await page.getByRole('switch', { name: 'Allow password sign-in (turn off for SSO-only)' }).uncheck();
    await page.getByRole('button', { name: 'Save single sign-on' }).click();
    await page.locator('[data-saml-status]').getByText('Off (SSO only)').waitFor();
    await signOut(page);
    await page.reload();
    await page.getByRole('button', { name: 'Sign in with SSO' }).waitFor();
    expect(await page.getByLabel('Username or email').count()).to.equal(0);
    idp.person = { email: owner.email, name: owner.name };
    await page.getByRole('button', { name: 'Sign in with SSO' }).click();
    // Signed out on the settings page, the sign-in through the IdP comes back to it.
    await page.locator('[data-saml-status]').getByText('Off (SSO only)').waitFor();
    expect(new URL(page.url()).pathname).to.equal('/instance/sso');
    const login = await fetch(`${server.url}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: owner.username, password: owner.password }),
    });
    expect(login.status).to.equal(403);
  });
});
