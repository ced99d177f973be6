import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { agentAuthRequest } from '../../../support/device-keys';
import type { TestSmtp } from '../../../support/smtp';
import type { FakeStripe } from '../../../support/stripe';
import type { Person } from './browser';

/**
 * The steps of the cloud edition's console that its browser tests share: sign-up, the mailed links,
 * invitations, devices knocking, and billing. Each step waits for what the user would see when it is done.
 */

/** The first link of a message to the console page `page`. */
export function linkIn(text: string, page: string): string {
  const found = text.match(/https?:\/\/[^\s"<>]+/g)?.find((u) => new URL(u).pathname === page);
  if (!found) throw new Error(`no ${page} link in: ${text}`);
  return found.replace(/&amp;/g, '&');
}

/**
 * Signs up from the sign-in screen; answers the text of the confirmation mail once it arrived. `onForm` runs when
 * the empty form is shown (e.g. an accessibility check).
 */
export async function signUpFromSignIn(
  page: Page,
  url: string,
  smtp: TestSmtp,
  person: Person,
  onForm?: () => Promise<void>,
): Promise<string> {
  await page.goto(url);
  await page.getByRole('link', { name: 'Sign up' }).click();
  await page.getByRole('heading', { name: 'Create your account' }).waitFor();
  await onForm?.();
  await page.getByLabel('Name', { exact: true }).fill(person.name);
  await page.getByLabel('E-mail', { exact: true }).fill(person.email);
  await page.getByLabel('Username').fill(person.username);
  await page.getByLabel('Password', { exact: true }).fill(person.password);
  const mail = smtp.waitFor(person.email, 15_000);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByText(`We sent a link to ${person.email}`).waitFor();
  return (await mail).text;
}

/** Follows the mailed confirmation link. */
export async function confirmAddress(page: Page, mailText: string, email: string): Promise<void> {
  await page.goto(linkIn(mailText, '/validation_account'));
  await page.getByText(`Your address ${email} is confirmed`).waitFor();
}

/** From Settings → Members, invites `email` with `role`; answers the link the invitee was mailed. */
export async function inviteByEmail(
  page: Page,
  url: string,
  smtp: TestSmtp,
  email: string,
  role?: string,
): Promise<string> {
  await page.goto(`${url}/settings/members`);
  await page.getByRole('heading', { name: 'Invite by e-mail' }).waitFor();
  await page.getByLabel('E-mail', { exact: true }).fill(email);
  if (role) await page.getByLabel('Role').selectOption(role);
  const mail = smtp.waitFor(email, 15_000);
  await page.getByRole('button', { name: 'Send invitation' }).click();
  return linkIn((await mail).text, '/accept-invite');
}

/** Someone without an account follows an invitation link, signs up there and so joins `namespace`. */
export async function signUpFromInvitation(page: Page, link: string, person: Person, namespace: string) {
  await page.goto(link);
  await page.getByRole('heading', { name: 'Create your account' }).waitFor();
  await page.getByText(`Sign up to join the namespace ${namespace}.`).waitFor();
  expect(await page.getByLabel('E-mail', { exact: true }).inputValue()).to.equal(person.email);
  await page.getByLabel('Name', { exact: true }).fill(person.name);
  await page.getByLabel('Username').fill(person.username);
  await page.getByLabel('Password').fill(person.password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByText(`You joined the namespace ${namespace}`).waitFor();
}

/** The session the console keeps for the signed-in user. */
export async function consoleSession(page: Page): Promise<{ token: string; tenant: string; role: string }> {
  return JSON.parse((await page.evaluate('localStorage.getItem("gatehouse.auth")')) as string);
}

/** Devices `<prefix>-1` … `<prefix>-<count>` knock at the namespace as agents do; answers their uids. */
export async function devicesKnock(
  url: string,
  tenant: string,
  prefix: string,
  count: number,
): Promise<string[]> {
  const uids: string[] = [];
  for (let n = 1; n <= count; n++) {
    const request = agentAuthRequest({
      tenant,
      hostname: `${prefix}-${n}`,
      mac: `02:00:00:00:50:${String(n).padStart(2, '0')}`,
      keyLabel: `web-${prefix}-${n}`,
    });
    const res = await fetch(`${url}/api/devices/auth`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...request.headers },
      body: JSON.stringify(request.body),
    });
    expect(res.status).to.equal(200);
    uids.push(((await res.json()) as { uid: string }).uid);
  }
  return uids;
}

/** Accepts a pending device from the devices screen, where no device limit stands in the way. */
export async function acceptDevice(page: Page, url: string, name: string): Promise<void> {
  await page.goto(`${url}/devices/pending`);
  const accept = page.getByRole('button', { name: `Accept ${name}` });
  await accept.waitFor();
  expect(await accept.isDisabled(), `${name} can be accepted`).to.equal(false);
  expect(await page.getByText('Device limit reached').count()).to.equal(0);
  await accept.click();
  await page.getByText(`${name} accepted`).waitFor();
}

/** On the pending devices screen, the limit is explained and `name` cannot be accepted; follows the link to Billing. */
export async function meetDeviceLimit(page: Page, url: string, name: string): Promise<void> {
  await page.goto(`${url}/devices/pending`);
  const alert = page.getByRole('status').filter({ hasText: 'Device limit reached' });
  await alert.waitFor();
  await alert.getByText('Beyond 3 devices, accepting needs an active subscription.').waitFor();
  expect(await page.getByRole('button', { name: `Accept ${name}` }).isDisabled()).to.equal(true);
  await alert.getByRole('link', { name: 'Open Billing to subscribe' }).click();
  await page.getByRole('heading', { name: 'Billing' }).waitFor();
  await page.getByText('No subscription').waitFor();
}

/** Stripe's test cards as entered on the hosted page, with the last four digits the console then shows. */
export const testCards = {
  visa: { number: '4242 4242 4242 4242', last4: '4242' },
  mastercard: { number: '5555 5555 5555 4444', last4: '4444' },
};

/**
 * On the Billing screen: enters a test card on Stripe's hosted page (the local Stripe's) and comes back with it
 * added. `onHostedPage` runs when the card form is shown (e.g. an accessibility check).
 */
export async function addCard(
  page: Page,
  card: { number: string; last4: string } = testCards.visa,
  onHostedPage?: () => Promise<void>,
): Promise<void> {
  const cards = page.getByRole('table', { name: 'Cards' });
  const had = await cards.getByText(`**** **** **** ${card.last4}`).count();
  await page.getByRole('button', { name: 'Add a card' }).click();
  await page.getByRole('heading', { name: 'Save a card' }).waitFor();
  expect(new URL(page.url()).pathname).to.match(/^\/c\/pay\/cs_test_/);
  await onHostedPage?.();
  await page.getByLabel('Card number').fill(card.number);
  await page.getByLabel('Expiry (MM / YY)').fill('12 / 34');
  await page.getByLabel('CVC').fill('123');
  await page.getByLabel('Name on card').fill('Ada Lovelace');
  await page.getByRole('button', { name: 'Save card' }).click();
  await page.getByText('Card added').waitFor();
  // The address no longer carries the session, so a reload does not complete it again.
  expect(new URL(page.url()).search).to.equal('');
  await cards.getByText(`**** **** **** ${card.last4}`).nth(had).waitFor();
}

/**
 * On the Billing screen with a card: reads the price shown, subscribes after confirming the amount, and waits for
 * the first invoice, paid, of `amount`. `onConfirm` runs while the confirmation is open.
 */
export async function subscribe(page: Page, amount: string, onConfirm?: () => Promise<void>): Promise<void> {
  await page.getByText(`${amount} per month for`).waitFor();
  await page.getByRole('button', { name: 'Subscribe' }).click();
  const dialog = page.getByRole('dialog', { name: `Subscribe for ${amount} per month?` });
  await dialog.waitFor();
  await onConfirm?.();
  await dialog.getByRole('button', { name: 'Subscribe' }).click();
  await page.getByText('Subscribed: this namespace can now accept more devices').waitFor();
  await page.getByText('Active', { exact: true }).waitFor();
  const invoices = page.getByRole('table', { name: 'Invoices' });
  await invoices.getByText('Paid').waitFor();
  await invoices.getByText(amount).waitFor();
}

/** The number of devices Stripe bills the subscription for. */
export async function billedDevices(stripe: FakeStripe, subscription: string): Promise<number | undefined> {
  const atStripe = await stripe.sdk.subscriptions.retrieve(subscription);
  return atStripe.items.data[0]?.quantity;
}

/** The console server's environment for the Stripe double. */
export function stripeEnv(stripe: FakeStripe): Record<string, string> {
  return {
    GATEHOUSE_STRIPE_SECRET_KEY: stripe.secretKey,
    GATEHOUSE_STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
    GATEHOUSE_STRIPE_PLAN: stripe.plan,
    GATEHOUSE_STRIPE_API_BASE: stripe.url,
  };
}
