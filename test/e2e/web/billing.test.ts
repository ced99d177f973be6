import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { type FakeStripe, startFakeStripe } from '../../support/stripe';
import { completeSetup, expectAccessible, launchBrowser, noWiderThanScreen } from './support/browser';
import {
  acceptDevice,
  addCard,
  billedDevices,
  consoleSession,
  devicesKnock,
  meetDeviceLimit,
  stripeEnv,
  subscribe,
  testCards,
} from './support/cloud';
import { type ConsoleServer, startConsoleServer } from './support/console-server';

/**
 * Billing in the console of the cloud edition, at 1280 and 390 px: with three devices accepted the fourth cannot
 * be, and the devices screen says why and links to Billing; there the owner enters a card on Stripe's hosted page
 * (the local Stripe's), sees the price and what a subscription would charge, confirms Subscribe, sees the paid
 * invoice, and back on the devices screen accepts the fourth device, which Stripe is told about. While Stripe is away
 * the page says so; a server without Stripe says on the page that billing is not set up. Every screen passes axe with no violation of any impact.
 */
const screens = [
  { width: 1280, height: 900 },
  { width: 390, height: 844 },
];

for (const viewport of screens) {
  const at = `${viewport.width} px`;

  describe(`web console (cloud): a card on Stripe's page, the price, then Subscribe (${at})`, function () {
    this.timeout(180_000);
    let stripe: FakeStripe;
    let server: ConsoleServer;
    let browser: Browser;
    let page: Page;
    let auth: { token: string; tenant: string };
    let uids: string[] = [];

    const api = async (method: string, path: string) => {
      const res = await fetch(`${server.url}${path}`, {
        method,
        headers: { Authorization: `Bearer ${auth.token}` },
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };

    before(async () => {
      stripe = await startFakeStripe();
      [server, browser] = await Promise.all([
        startConsoleServer({
          edition: 'cloud',
          env: stripeEnv(stripe),
        }),
        launchBrowser(),
      ]);
      stripe.webhookUrl = `${server.url}/api/billing/webhook`;
      page = await (await browser.newContext({ viewport })).newPage();
      await completeSetup(page, server.setupUrl);
      await page.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
      auth = await consoleSession(page);
      uids = await devicesKnock(server.url, auth.tenant, 'paid', 4);
      for (const uid of uids.slice(0, 3))
        expect((await api('PATCH', `/api/devices/${uid}/accept`)).status).to.equal(200);
    });
    after(async () => {
      await browser?.close();
      await server?.stop();
      await stripe?.stop();
    });

    it('explains the limit where the fourth device waits, and links to Billing', async () => {
      await meetDeviceLimit(page, server.url, 'paid-4');
      await page.getByRole('heading', { name: 'No card yet' }).waitFor();
      // The console no longer asks for a payment method id.
      expect(await page.getByPlaceholder('pm_...').count()).to.equal(0);
      await noWiderThanScreen(page, `billing without a card at ${at}`);
      await expectAccessible(page, `billing without a card at ${at}`, { anyImpact: true });
    });

    it("comes back without a card when the entry is canceled on Stripe's page", async () => {
      await page.getByRole('button', { name: 'Add a card' }).click();
      await page.getByRole('heading', { name: 'Save a card' }).waitFor();
      await page.getByRole('link', { name: 'Cancel' }).click();
      await page.getByText('The card entry was canceled.').waitFor();
      await page.getByRole('heading', { name: 'No card yet' }).waitFor();
      await expectAccessible(page, `billing after a canceled card entry at ${at}`, { anyImpact: true });
    });

    it("adds a card entered on Stripe's hosted page, the first one the default", async () => {
      await addCard(page, testCards.visa, async () => {
        await noWiderThanScreen(page, `Stripe's card page at ${at}`);
        await expectAccessible(page, `Stripe's card page at ${at}`, { anyImpact: true });
      });
      const cards = page.getByRole('table', { name: 'Cards' });
      await cards.getByText('Default').waitFor();
      const customer = (await api('GET', '/api/billing/customer')).body.payment_methods as {
        number: string;
        default: boolean;
      }[];
      expect(customer.map((m) => [m.number.slice(-4), m.default])).to.deep.equal([['4242', true]]);
      // Reloading the page does not add the card again.
      await page.reload();
      await cards.getByText('**** **** **** 4242').waitFor();
      expect(await cards.getByText('**** **** **** 4242').count()).to.equal(1);
      await expectAccessible(page, `billing with a card at ${at}`, { anyImpact: true });
    });

    it('says Stripe is not answering, instead of errors, while it is away', async () => {
      stripe.outage = 'error';
      try {
        await page.reload();
        const away = page
          .getByRole('status')
          .filter({ hasText: 'Stripe, the payment provider, is not answering' });
        await away.filter({ hasText: 'The cards cannot be shown right now.' }).waitFor();
        await away.filter({ hasText: 'The price cannot be shown right now.' }).waitFor();
        expect(await page.getByText(/could not/i).count()).to.equal(0);
        expect(await page.getByRole('button', { name: 'Subscribe' }).isDisabled()).to.equal(true);
        await noWiderThanScreen(page, `billing while Stripe is away at ${at}`);
        await expectAccessible(page, `billing while Stripe is away at ${at}`, { anyImpact: true });
      } finally {
        stripe.outage = 'none';
      }
      for (const what of ['The cards', 'The price']) {
        const alert = page.getByRole('status').filter({ hasText: `${what} cannot be shown right now.` });
        await alert.getByRole('button', { name: 'Try again' }).click();
        await alert.waitFor({ state: 'detached' });
      }
      await page.getByRole('table', { name: 'Cards' }).getByText('**** **** **** 4242').waitFor();
      expect(await page.getByRole('button', { name: 'Subscribe' }).isDisabled()).to.equal(false);
    });

    it('shows the price and the devices charged, and subscribes only once confirmed', async () => {
      await page.getByText('$5.00 per device per month').waitFor();
      await page.getByText('$15.00 per month for 3 devices accepted').waitFor();
      // Dismissed, nothing is subscribed.
      await page.getByRole('button', { name: 'Subscribe' }).click();
      const dialog = page.getByRole('dialog', { name: 'Subscribe for $15.00 per month?' });
      await dialog.getByText('3 devices accepted now, at $5.00 per device per month').waitFor();
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'hidden' });
      expect((await api('GET', '/api/billing/subscription')).body).to.include({ status: 'inactive' });

      await subscribe(page, '$15.00', async () => {
        await expectAccessible(page, `subscribe confirmation at ${at}`, { anyImpact: true });
      });
      const sub = await api('GET', '/api/billing/subscription');
      expect(sub.body).to.include({ active: true, status: 'active' });
      expect(await billedDevices(stripe, sub.body.id as string)).to.equal(3);
      await noWiderThanScreen(page, `billing subscribed at ${at}`);
      await expectAccessible(page, `billing subscribed at ${at}`, { anyImpact: true });
    });

    it('then accepts the fourth device from the devices screen, and Stripe is told of four devices', async () => {
      await acceptDevice(page, server.url, 'paid-4');
      expect((await api('GET', `/api/devices/${uids[3]}`)).body.status).to.equal('accepted');
      const id = (await api('GET', '/api/billing/subscription')).body.id as string;
      expect(await billedDevices(stripe, id)).to.equal(4);
    });

    it('removes a card only after asking, and not the one paying the subscription while it is the only one', async () => {
      await page.goto(`${server.url}/billing`);
      const cards = page.getByRole('table', { name: 'Cards' });
      await cards.getByText('**** **** **** 4242').waitFor();
      const remove4242 = page.getByRole('button', { name: /Remove the .* card ending 4242/ });
      const dialog = page.getByRole('dialog', { name: /Remove the .* card ending 4242\?/ });
      await remove4242.click();
      await expectAccessible(page, `remove card dialog at ${at}`, { anyImpact: true });
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'hidden' });

      // The only card pays the running subscription: the server refuses, and the dialog says why.
      await remove4242.click();
      await dialog.getByRole('button', { name: 'Remove' }).click();
      await dialog.getByText(/add another card before removing it/).waitFor();
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      expect((await api('GET', '/api/billing/customer')).body.payment_methods).to.have.length(1);

      // With a second card it goes, and the other becomes the default.
      await addCard(page, testCards.mastercard);
      await remove4242.click();
      await dialog.getByRole('button', { name: 'Remove' }).click();
      await page.getByText('Card removed').waitFor();
      await cards.getByText('**** **** **** 4242').waitFor({ state: 'detached' });
      const left = (await api('GET', '/api/billing/customer')).body.payment_methods as {
        number: string;
        default: boolean;
      }[];
      expect(left.map((m) => [m.number.slice(-4), m.default])).to.deep.equal([['4444', true]]);
    });
  });

  describe(`web console (cloud): Billing on a server without Stripe (${at})`, function () {
    this.timeout(120_000);
    let server: ConsoleServer;
    let browser: Browser;
    let page: Page;

    before(async () => {
      [server, browser] = await Promise.all([startConsoleServer({ edition: 'cloud' }), launchBrowser()]);
      page = await (await browser.newContext({ viewport })).newPage();
      await completeSetup(page, server.setupUrl);
      await page.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
    });
    after(async () => {
      await browser?.close();
      await server?.stop();
    });

    it('says billing is not set up on this server, with no error and nothing to pay with', async () => {
      await page.goto(`${server.url}/billing`);
      await page.getByRole('heading', { name: 'Billing', exact: true }).waitFor();
      const notice = page.getByText('Billing is not set up on this server');
      await notice.waitFor();
      await page.getByText('Each namespace can accept up to 3 devices.', { exact: false }).waitFor();
      expect(await page.getByRole('button', { name: 'Subscribe' }).count()).to.equal(0);
      expect(await page.getByRole('button', { name: 'Add a card' }).count()).to.equal(0);
      expect(await page.getByRole('button', { name: 'Try again' }).count()).to.equal(0);
      expect(await page.getByText(/could not|failed/i).count()).to.equal(0);
      await noWiderThanScreen(page, `billing not set up at ${at}`);
      await expectAccessible(page, `billing not set up at ${at}`, { anyImpact: true });
    });
  });
}
