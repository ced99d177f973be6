import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { startSmtp, type TestSmtp } from '../../support/smtp';
import { completeSetup, expectAccessible, launchBrowser, signIn } from './support/browser';
import {
  confirmAddress,
  consoleSession,
  inviteByEmail,
  linkIn,
  signUpFromInvitation,
  signUpFromSignIn,
} from './support/cloud';
import { type ConsoleServer, startConsoleServer } from './support/console-server';

const beaAccount = {
  name: 'Bea Builder',
  email: 'bea@example.com',
  username: 'bea',
  password: 'bea_secret-1',
};
const carlAccount = {
  name: 'Carl Coder',
  email: 'carl@example.com',
  username: 'carl',
  password: 'carl_secret-1',
};

/**
 * Accounts and invitations in the console of the cloud edition: a visitor signs up from the sign-in
 * screen, confirms the address with the mailed link, and signs in; the owner invites her by e-mail and she
 * accepts; someone without an account follows an invitation link to sign-up and lands in the namespace.
 */
describe('web console (cloud): sign-up, e-mail verification, invitation and acceptance', function () {
  this.timeout(180_000);
  let smtp: TestSmtp;
  let server: ConsoleServer;
  let browser: Browser;
  let owner: Page;

  const visitor = async () =>
    (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();

  before(async () => {
    smtp = await startSmtp();
    [server, browser] = await Promise.all([
      startConsoleServer({ edition: 'cloud', env: { GATEHOUSE_SMTP_URL: smtp.url } }),
      launchBrowser(),
    ]);
    owner = await visitor();
    await completeSetup(owner, server.setupUrl);
    await owner.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await smtp?.stop();
  });

  it('signs up from the sign-in screen, is refused until the address is confirmed, then signs in', async () => {
    const page = await visitor();
    const mail = await signUpFromSignIn(page, server.url, smtp, beaAccount, () =>
      expectAccessible(page, 'sign-up'),
    );
    await signIn(page, server.url, 'bea', 'bea_secret-1');
    await page.getByText(/not verified yet/).waitFor();

    await confirmAddress(page, mail, beaAccount.email);
    await signIn(page, server.url, 'bea', 'bea_secret-1');
    await page.getByRole('button', { name: 'Namespace: No namespace. Change namespace' }).waitFor();
  });

  it('the owner invites an account by e-mail; she accepts from the mailed link and lands in the namespace', async () => {
    const link = await inviteByEmail(owner, server.url, smtp, 'bea@example.com', 'operator');
    // Pending, in Members: e-mail, role, the link's expiry, and what can be done about it.
    const pending = owner.getByRole('table', { name: 'Pending invitations' });
    const row = pending.getByRole('row').filter({ hasText: 'bea@example.com' });
    await row.waitFor();
    const ownerSession = await consoleSession(owner);
    const listed = (await (
      await fetch(`${server.url}/api/namespaces/${ownerSession.tenant}/members/invites`, {
        headers: { Authorization: `Bearer ${ownerSession.token}` },
      })
    ).json()) as { email: string; expires_at: string }[];
    const expiresAt = listed.find((i) => i.email === 'bea@example.com')?.expires_at as string;
    expect(Date.parse(expiresAt) - Date.now()).to.be.within(7 * 86_400_000 - 120_000, 7 * 86_400_000);
    const shownExpiry = await owner.evaluate(
      (iso) => new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }),
      expiresAt,
    );
    expect(await row.getByRole('cell').allTextContents()).to.deep.equal([
      'bea@example.com',
      'operator',
      'pending',
      shownExpiry,
      'ResendWithdraw',
    ]);
    expect(await owner.getByRole('table', { name: 'Members' }).getByText('bea@example.com').count()).to.equal(
      0,
    );
    await expectAccessible(owner, 'members with pending invitations');
    expect(await owner.getByText(link).textContent()).to.equal(link);

    const bea = await visitor();
    await bea.goto(link);
    await bea.getByText('Sign in as bea@example.com to accept the invitation to the namespace ada').waitFor();
    await bea.getByLabel('Username or email').fill('bea');
    await bea.getByLabel('Password', { exact: true }).fill('bea_secret-1');
    await bea.getByRole('button', { name: 'Sign in' }).click();
    await bea.getByRole('heading', { name: 'Join the namespace ada' }).waitFor();
    await bea.getByRole('button', { name: 'Accept invitation' }).click();
    await bea.getByRole('button', { name: 'Namespace: ada. Change namespace' }).waitFor();
    const auth = await consoleSession(bea);
    expect(auth.role).to.equal('operator');

    await owner.reload();
    await owner.getByText('No pending invitations').waitFor();
  });

  it('Members sends a pending invitation again with a new link, and withdraws one', async () => {
    const first = await inviteByEmail(owner, server.url, smtp, 'dora@example.com');
    const again = smtp.waitFor('dora@example.com', 15_000);
    await owner.getByRole('button', { name: 'Resend the invitation to dora@example.com' }).click();
    await owner.getByText('Invitation sent again to dora@example.com').waitFor();
    const second = linkIn((await again).text, '/accept-invite');
    expect(second).to.not.equal(first);
    // Only the newest link is good; withdrawn, none is.
    const status = async (link: string) => {
      const q = new URL(link).searchParams;
      const path = `/api/namespaces/${q.get('tenant-id')}/members/${q.get('user-id')}/accept-invite`;
      return (await fetch(`${server.url}${path}?sig=${encodeURIComponent(q.get('sig') ?? '')}`)).status;
    };
    expect(await status(second)).to.equal(200);
    expect(await status(first)).to.not.equal(200);

    await owner.getByRole('button', { name: 'Withdraw the invitation to dora@example.com' }).click();
    await owner.getByText('No pending invitations').waitFor();
    expect(await status(second)).to.not.equal(200);
  });

  it('an invitation to an address without an account leads to sign-up, which joins the namespace', async () => {
    const link = await inviteByEmail(owner, server.url, smtp, carlAccount.email);
    const carl = await visitor();
    await signUpFromInvitation(carl, link, carlAccount, 'ada');
    await signIn(carl, server.url, 'carl', 'carl_secret-1');
    await carl.getByRole('button', { name: 'Namespace: ada. Change namespace' }).waitFor();
  });

  it('shows a new announcement once per user, on the server: not again in another browser, still to others', async () => {
    const session = await consoleSession(owner);
    const published = await fetch(`${server.url}/api/admin/announcements`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${session.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Gateway maintenance', content: 'The **gateway** restarts on Sunday.' }),
    });
    expect(published.status).to.equal(200);
    const { uuid } = (await published.json()) as { uuid: string };
    const seenCall = (page: Page) =>
      page.waitForResponse(
        (r) => r.url().endsWith(`/api/announcements/${uuid}/seen`) && r.request().method() === 'GET',
      );

    await owner.goto(`${server.url}/devices`);
    const dialog = owner.getByRole('dialog', { name: 'Gateway maintenance' });
    await dialog.getByText('restarts on Sunday').waitFor();
    const marked = owner.waitForResponse(
      (r) => r.url().endsWith(`/api/announcements/${uuid}/seen`) && r.request().method() === 'PUT',
    );
    await dialog.getByRole('button', { name: 'Got it' }).click();
    expect((await marked).status()).to.equal(200);

    // The same person in a browser that never saw it: the server says it was seen.
    const elsewhere = await visitor();
    const checked = seenCall(elsewhere);
    await signIn(elsewhere, server.url, 'ada', 'correct-horse');
    expect(await (await checked).json()).to.deep.equal({ seen: true });
    await elsewhere.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
    expect(await elsewhere.getByRole('dialog', { name: 'Gateway maintenance' }).count()).to.equal(0);

    // Someone else still gets it once.
    const carlPage = await visitor();
    await signIn(carlPage, server.url, 'carl', 'carl_secret-1');
    await carlPage.getByRole('dialog', { name: 'Gateway maintenance' }).waitFor();
  });

  it('lets the instance administrator publish, edit and withdraw an announcement from its page, at 390 px', async () => {
    const page = await visitor();
    await page.setViewportSize({ width: 390, height: 844 });
    await signIn(page, server.url, 'ada', 'correct-horse');
    await page.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
    await page.goto(`${server.url}/instance/announcements`);
    await page.getByRole('heading', { name: 'Announcements', exact: true }).waitFor();
    // The announcement the test before published is listed; this one adds a second and takes it back.
    await page.getByRole('cell', { name: 'Gateway maintenance' }).waitFor();

    await page.getByRole('button', { name: 'Publish announcement' }).click();
    await page.getByLabel('Title').fill('New gateway address');
    await page.getByLabel('Text (Markdown)').fill('Use `gw2.example.com` from Monday.');
    await page.getByRole('button', { name: 'Publish', exact: true }).click();
    const row = page.getByRole('row').filter({ hasText: 'New gateway address' });
    await row.waitFor();

    await row.getByRole('button', { name: 'Edit' }).click();
    expect(await page.getByLabel('Text (Markdown)').inputValue()).to.equal(
      'Use `gw2.example.com` from Monday.',
    );
    await page.getByLabel('Title').fill('New gateway address: gw2');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('row').filter({ hasText: 'New gateway address: gw2' }).waitFor();
    await expectAccessible(page, 'cloud /instance/announcements with two announcements at 390 px');

    await page
      .getByRole('row')
      .filter({ hasText: 'New gateway address: gw2' })
      .getByRole('button', { name: 'Withdraw' })
      .click();
    await row.waitFor({ state: 'detached' });
    const session = await consoleSession(page);
    const listed = await fetch(`${server.url}/api/announcements`, {
      headers: { Authorization: `Bearer ${session.token}` },
    });
    expect(((await listed.json()) as { title: string }[]).map((a) => a.title)).to.deep.equal([
      'Gateway maintenance',
    ]);
  });
});
