import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { TestIdp } from '../../support/saml-idp';
import { completeSetup, expectAccessible, launchBrowser, noWiderThanScreen, owner } from './support/browser';
import { type ConsoleServer, startConsoleServer } from './support/console-server';

// The rough edges of single sign-on in the enterprise console, at a desktop and a phone width: a person sent to
// sign in from a page comes back to it after SSO; an account made by SSO is told its password is its identity
// provider's, with no form to change it; the administrator turns IdP-initiated sign-in (app tiles) on in the
// settings screen, and a tile then signs the person in once; off, the tile is refused with a reason. Signing out of
// an SSO sign-in goes through the IdP's single logout page and back to the sign-in screen.

const widths = [
  { name: 'desktop', viewport: { width: 1280, height: 900 } },
  { name: 'phone', viewport: { width: 390, height: 844 } },
];

describe('web console: SAML return path, SSO accounts and IdP-initiated sign-in', function () {
  this.timeout(240_000);
  let server: ConsoleServer;
  let browser: Browser;
  let admin: Page;
  const idp = new TestIdp();

  const adminToken = async () =>
    (
      JSON.parse((await admin.evaluate('localStorage.getItem("gatehouse.auth")')) as string) as {
        token: string;
      }
    ).token;

  before(async () => {
    [server, browser] = await Promise.all([startConsoleServer({ edition: 'enterprise' }), launchBrowser()]);
    await idp.listen(async () => (await fetch(`${server.url}/api/user/saml/metadata`)).text());
    admin = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    await completeSetup(admin, server.setupUrl);
    await admin.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
    const res = await fetch(`${server.url}/api/admin/saml`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${await adminToken()}` },
      body: JSON.stringify({ enabled: true, idp_metadata_xml: idp.metadata() }),
    });
    expect(res.status).to.equal(200);
  });
  after(async () => {
    await browser?.close();
    await idp.close();
    await server?.stop();
  });

  for (const { name, viewport } of widths) {
    it(`brings a person back to the page they were sent to sign in from (${name})`, async () => {
      idp.person = { email: `back-${name}@example.com`, name: 'Back Again' };
      const context = await browser.newContext({ viewport });
      const p = await context.newPage();
      await p.goto(`${server.url}/devices/pending?page=1`);
      await p.getByRole('heading', { name: 'Sign in to Gatehouse' }).waitFor();
      await p.getByRole('button', { name: 'Sign in with SSO' }).click();
      await p.getByRole('heading', { name: 'Devices' }).waitFor();
      const at = new URL(p.url());
      expect(at.pathname + at.search).to.equal('/devices/pending?page=1');
      expect(at.hash).to.equal('');
      await expectAccessible(p, `devices after SSO (${name})`, { anyImpact: true });
      await noWiderThanScreen(p, `devices after SSO (${name})`);
      await context.close();
    });

    it(`tells an account made by SSO that its password is managed by the identity provider (${name})`, async () => {
      idp.person = { email: `made-${name}@example.com`, name: 'Made By Sso' };
      const context = await browser.newContext({ viewport });
      const p = await context.newPage();
      await p.goto(`${server.url}/settings/security`);
      await p.getByRole('button', { name: 'Sign in with SSO' }).click();
      await p.getByRole('heading', { name: 'Account settings' }).waitFor();
      expect(new URL(p.url()).pathname).to.equal('/settings/security');
      await p.getByText('which manages your password').waitFor();
      expect(await p.getByLabel('Current password').count()).to.equal(0);
      expect(await p.getByRole('button', { name: 'Change password' }).count()).to.equal(0);
      await expectAccessible(p, `security settings of an SSO account (${name})`, { anyImpact: true });
      await noWiderThanScreen(p, `security settings of an SSO account (${name})`);
      await context.close();
    });
  }

  for (const { name, viewport } of widths) {
    it(`signs out at the identity provider too, and lands on the sign-in screen (${name})`, async () => {
      idp.person = { email: `leaving-${name}@example.com`, name: 'Leaving Soon' };
      const context = await browser.newContext({ viewport });
      const p = await context.newPage();
      await p.goto(`${server.url}/devices`);
      await p.getByRole('button', { name: 'Sign in with SSO' }).click();
      await p.getByRole('heading', { name: 'Devices' }).waitFor();
      const { token } = JSON.parse(
        (await p.evaluate('localStorage.getItem("gatehouse.auth")')) as string,
      ) as {
        token: string;
      };
      const before = idp.logouts.length;
      await p.getByRole('button', { name: /Account menu/ }).click();
      await p.getByRole('button', { name: 'Sign out' }).click();
      await p.waitForURL(`${server.url}/`);
      await p.getByRole('heading', { name: 'Sign in to Gatehouse' }).waitFor();
      // The browser went through the IdP's single logout page, with a LogoutRequest for this person.
      expect(idp.logouts.length).to.equal(before + 1);
      expect(idp.logouts.at(-1)?.nameID).to.equal(`leaving-${name}@example.com`);
      expect(await p.evaluate('localStorage.getItem("gatehouse.auth")')).to.equal(null);
      const me = await fetch(`${server.url}/api/auth/user`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      expect(me.status).to.equal(401);
      await expectAccessible(p, `sign-in after single logout (${name})`, { anyImpact: true });
      await context.close();
    });
  }

  it('still shows the change-password form to a local account', async () => {
    await admin.goto(`${server.url}/settings/security`);
    await admin.getByRole('button', { name: 'Change password' }).waitFor();
    expect(await admin.getByText('which manages your password').count()).to.equal(0);
  });

  it('refuses a sign-in started at the identity provider while the setting is off, saying why', async () => {
    idp.person = { email: owner.email, name: owner.name };
    const context = await browser.newContext();
    const p = await context.newPage();
    await p.goto(`${idp.ssoUrl.replace(/\/sso$/, '/tile')}?RelayState=/devices`);
    await p
      .getByRole('alert')
      .filter({
        hasText: 'the sign-in was started at the identity provider, which this server does not accept',
      })
      .waitFor();
    expect(await p.evaluate('localStorage.getItem("gatehouse.auth")')).to.equal(null);
    await expectAccessible(p, 'sign-in with an unsolicited answer refused', { anyImpact: true });
    await context.close();
  });

  for (const { name, viewport } of widths) {
    it(`lets the administrator turn IdP-initiated sign-in on and off in the settings screen (${name})`, async () => {
      await admin.setViewportSize(viewport);
      await admin.goto(`${server.url}/instance/sso`);
      await admin.getByRole('heading', { name: 'Single sign-on', exact: true }).waitFor();
      const status = admin.locator('[data-saml-status]');
      await status.getByText('Refused').waitFor();
      await status.getByText(idp.ssoUrl.replace(/\/sso$/, '/slo')).waitFor();
      const tiles = admin.getByRole('switch', {
        name: 'Accept sign-ins started at the identity provider (app tiles)',
      });
      expect(await tiles.isChecked()).to.equal(false);
      await tiles.check();
      await admin.getByText('accepted once, within 5 minutes of being issued').waitFor();
      await expectAccessible(admin, `single sign-on settings (${name})`, { anyImpact: true });
      await noWiderThanScreen(admin, `single sign-on settings (${name})`);
      await admin.getByRole('button', { name: 'Save single sign-on' }).click();
      await status.getByText('Accepted (each answer once)').waitFor();
      await tiles.uncheck();
      await admin.getByRole('button', { name: 'Save single sign-on' }).click();
      await status.getByText('Refused').waitFor();
    });
  }

  it('signs a person in from an app tile once the setting is on, at the page the tile names', async () => {
    await admin.setViewportSize({ width: 1280, height: 900 });
    await admin
      .getByRole('switch', { name: 'Accept sign-ins started at the identity provider (app tiles)' })
      .check();
    await admin.getByRole('button', { name: 'Save single sign-on' }).click();
    await admin.locator('[data-saml-status]').getByText('Accepted (each answer once)').waitFor();
    idp.person = { email: 'tile@example.com', name: 'Tile User' };
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const p = await context.newPage();
    await p.goto(`${idp.ssoUrl.replace(/\/sso$/, '/tile')}?RelayState=/devices`);
    await p.getByRole('heading', { name: 'Devices' }).waitFor();
    expect(new URL(p.url()).pathname).to.equal('/devices');
    const stored = JSON.parse((await p.evaluate('localStorage.getItem("gatehouse.auth")')) as string) as {
      email: string;
      origin: string;
    };
    expect(stored).to.include({ email: 'tile@example.com', origin: 'saml' });
    await context.close();
  });
});
