import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { startSmtp, type TestSmtp } from '../../support/smtp';
import { type FakeStripe, startFakeStripe } from '../../support/stripe';
import { completeSetup, launchBrowser, signIn } from './support/browser';
import {
  acceptDevice,
  addCard,
  billedDevices,
  confirmAddress,
  consoleSession,
  devicesKnock,
  inviteByEmail,
  meetDeviceLimit,
  signUpFromInvitation,
  signUpFromSignIn,
  stripeEnv,
  subscribe,
} from './support/cloud';
import { type ConsoleServer, startConsoleServer } from './support/console-server';

const bea = { name: 'Bea Builder', email: 'bea@example.com', username: 'bea', password: 'bea_secret-1' };
const carl = { name: 'Carl Coder', email: 'carl@example.com', username: 'carl', password: 'carl_secret-1' };

/**
 * One person's first day on the cloud edition, end to end: Bea signs up, confirms her address from
 * the mail (a real SMTP server), makes her namespace, invites Carl, who accepts by signing up from the mailed link,
 * accepts her three free devices, meets the limit at the fourth, subscribes (the Stripe double) and accepts it.
 */
describe('web console (cloud): from sign-up to a fourth device', function () {
  this.timeout(240_000);
  let smtp: TestSmtp;
  let stripe: FakeStripe;
  let server: ConsoleServer;
  let browser: Browser;

  const visitor = async () =>
    (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();

  before(async () => {
    [smtp, stripe] = await Promise.all([startSmtp(), startFakeStripe()]);
    [server, browser] = await Promise.all([
      startConsoleServer({ edition: 'cloud', env: { GATEHOUSE_SMTP_URL: smtp.url, ...stripeEnv(stripe) } }),
      launchBrowser(),
    ]);
    stripe.webhookUrl = `${server.url}/api/billing/webhook`;
    // The instance's administrator, who runs it; the journey is Bea's.
    const admin = await visitor();
    await completeSetup(admin, server.setupUrl);
    await admin.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await stripe?.stop();
    await smtp?.stop();
  });

  it('signs up, verifies, invites, the invitee accepts, subscribes, and accepts a fourth device', async () => {
    const page = await visitor();
    const confirmation = await signUpFromSignIn(page, server.url, smtp, bea);
    await confirmAddress(page, confirmation, bea.email);
    await signIn(page, server.url, bea.username, bea.password);
    // A new sign-up has no namespace: Home guides to the first one, with no install command for an empty tenant.
    const guide = page.locator('section.card', {
      has: page.getByRole('heading', { name: 'Create your first namespace' }),
    });
    await guide.waitFor();
    expect(await page.getByRole('heading', { name: 'Add a device' }).count()).to.equal(0);
    expect(await page.locator('code', { hasText: /^\s*$/ }).count()).to.equal(0);
    expect(await page.getByText('Could not load', { exact: false }).count()).to.equal(0);
    await guide.getByLabel('Name', { exact: true }).fill('bea-lab');
    await guide.getByRole('button', { name: 'Create namespace' }).click();
    await page.getByRole('button', { name: 'Namespace: bea-lab. Change namespace' }).waitFor();
    // Home is now the namespace's: its install command carries the new tenant ID.
    await page.getByRole('heading', { name: 'Add a device' }).waitFor();
    const tenant = JSON.parse(
      (await page.evaluate('localStorage.getItem("gatehouse.auth")')) as string,
    ).tenant;
    expect(tenant).to.match(/^[0-9a-f-]{36}$/);
    const fields = await page
      .locator('textarea, input[readonly]')
      .evaluateAll((els) => els.map((el) => (el as HTMLInputElement).value));
    expect(fields.some((v) => v.includes(`GATEHOUSE_TENANT_ID=${tenant}`))).to.equal(true);

    const link = await inviteByEmail(page, server.url, smtp, carl.email, 'operator');
    const invitee = await visitor();
    await signUpFromInvitation(invitee, link, carl, 'bea-lab');
    await signIn(invitee, server.url, carl.username, carl.password);
    await invitee.getByRole('button', { name: 'Namespace: bea-lab. Change namespace' }).waitFor();
    expect((await consoleSession(invitee)).role).to.equal('operator');

    const session = await consoleSession(page);
    const uids = await devicesKnock(server.url, session.tenant, 'lab', 4);
    for (const name of ['lab-1', 'lab-2', 'lab-3']) await acceptDevice(page, server.url, name);
    await meetDeviceLimit(page, server.url, 'lab-4');
    await addCard(page);
    await subscribe(page, '$15.00');
    await acceptDevice(page, server.url, 'lab-4');

    const api = (path: string) =>
      fetch(`${server.url}${path}`, { headers: { Authorization: `Bearer ${session.token}` } }).then(
        (res) => res.json() as Promise<Record<string, unknown>>,
      );
    expect((await api(`/api/devices/${uids[3]}`)).status).to.equal('accepted');
    const subscription = await api('/api/billing/subscription');
    expect(subscription).to.include({ active: true, status: 'active' });
    expect(await billedDevices(stripe, subscription.id as string)).to.equal(4);
  });
});
