import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { type FakeStripe, startFakeStripe } from '../../support/stripe';
import { completeSetup, expectAccessible, launchBrowser } from './support/browser';
import {
  acceptDevice,
  addCard,
  billedDevices,
  consoleSession,
  devicesKnock,
  meetDeviceLimit,
  stripeEnv,
  subscribe,
} from './support/cloud';
import { type ConsoleServer, startConsoleServer } from './support/console-server';

/**
 * Billing in the console of the cloud edition: with three devices accepted the fourth cannot be, and the
 * devices screen says why and links to Billing; there the owner adds a card, subscribes, sees the paid invoice, and
 * back on the devices screen accepts the fourth device, which Stripe is told about.
 */
describe('web console (cloud): subscribe, then accept a fourth device', function () {
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
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
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
  });

  it('adds a card and subscribes: active, with the first invoice paid', async () => {
    await addCard(page);
    await expectAccessible(page, 'billing with a card');

    await subscribe(page, '$15.00');
    const sub = await api('GET', '/api/billing/subscription');
    expect(sub.body).to.include({ active: true, status: 'active' });
    await expectAccessible(page, 'billing subscribed');
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
    await expectAccessible(page, 'remove card dialog');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });

    // The only card pays the running subscription: the server refuses, and the dialog says why.
    await remove4242.click();
    await dialog.getByRole('button', { name: 'Remove' }).click();
    await dialog.getByText(/add another card before removing it/).waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await api('GET', '/api/billing/customer')).body.payment_methods).to.have.length(1);

    // With a second card it goes, and the other becomes the default.
    await page.getByLabel('Add a card').fill('pm_card_mastercard');
    await page.getByRole('button', { name: 'Add card' }).click();
    await cards.getByText('**** **** **** 4444').waitFor();
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
