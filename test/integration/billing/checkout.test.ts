import { expect } from 'chai';
import type Stripe from 'stripe';
import { type LoginAnswer, startServer, type TestServer } from '../../support/server';
import { billingSettings, type FakeStripe, startFakeStripe } from '../../support/stripe';
import { otherNamespace, registerDevice } from '../../support/tenants';

/**
 * Card entry through Stripe Checkout in setup mode, the plan's price, and billing answering 424 consistently when
 * the server has no Stripe: against the official SDK talking to the local Stripe (test/support/stripe.ts), whose
 * hosted card page is filled in here as a browser would post it.
 */

/** Every billing call, with a body it accepts. */
const everyCall: [string, string, unknown?][] = [
  ['GET', '/api/billing/customer'],
  ['POST', '/api/billing/customer'],
  ['GET', '/api/billing/subscription'],
  ['POST', '/api/billing/subscription'],
  ['GET', '/api/billing/price'],
  ['POST', '/api/billing/checkout'],
  ['POST', '/api/billing/checkout/complete', { session_id: 'cs_test_abc' }],
  ['POST', '/api/billing/paymentmethod/attach', { id: 'pm_card_visa' }],
  ['POST', '/api/billing/paymentmethod/detach', { id: 'pm_card_visa' }],
  ['POST', '/api/billing/paymentmethod/default', { id: 'pm_card_visa' }],
  ['POST', '/api/billing/device-choice', { choices: [] }],
  ['GET', '/api/billing/devices-most-used'],
  ['POST', '/api/billing/report?action=device_accept'],
  ['POST', '/api/billing/evaluate'],
];

/** Fills in the hosted card page at `url` as its form posts; answers the status and where it redirects. */
async function enterCard(url: string, fields: Record<string, string>) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
  return { status: res.status, location: res.headers.get('location'), text: await res.text() };
}

const visa = { number: '4242 4242 4242 4242', expiry: '12 / 34', cvc: '123', name: 'Ada Admin' };

describe('billing (cloud): a card entered on Stripe Checkout, and the price before subscribing', function () {
  this.timeout(60_000);
  let stripe: FakeStripe;
  let server: TestServer;
  let me: LoginAnswer;
  let other: LoginAnswer;
  let billingPage: string;

  const api = (method: string, path: string, body?: unknown, token = me.token) =>
    server.api(method, path, { token, body });
  const checkout = async (token = me.token) => {
    const res = await api('POST', '/api/billing/checkout', undefined, token);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body as { id: string; url: string };
  };

  before(async () => {
    stripe = await startFakeStripe();
    server = await startServer({
      edition: 'cloud',
      ssh: false,
      overrides: {
        limits: { maxNamespaces: -1 },
        billing: billingSettings(stripe),
      },
    });
    me = await server.setup();
    other = await otherNamespace(server, me);
    billingPage = `${server.kernel.container.cradle.config.publicUrl.replace(/\/+$/, '')}/billing`;
  });
  after(async () => {
    await server?.stop();
    await stripe?.stop();
  });

  it('shows the price per device and interval, with the accepted devices it would be charged for', async () => {
    const empty = await api('GET', '/api/billing/price');
    expect(empty.status, JSON.stringify(empty.body)).to.equal(200);
    expect(empty.body).to.deep.equal({
      unit_amount: 500,
      currency: 'usd',
      interval: 'month',
      interval_count: 1,
      devices: 0,
      amount: 0,
    });
    for (const n of [1, 2]) {
      const d = await registerDevice(server, {
        tenant: me.tenant,
        hostname: `priced-${n}`,
        mac: `02:00:00:00:61:0${n}`,
        keyLabel: `priced-key-${n}`,
      });
      expect((await api('PATCH', `/api/devices/${d.uid}/accept`)).status).to.equal(200);
    }
    expect((await api('GET', '/api/billing/price')).body).to.include({ devices: 2, amount: 1000 });
    // Another namespace's devices are not this one's charge.
    expect((await api('GET', '/api/billing/price', undefined, other.token)).body).to.include({
      devices: 0,
      amount: 0,
    });
  });

  it("opens a setup-mode Checkout session for the namespace's customer, returning only to this server", async () => {
    // A return address in the body is not taken: the server has no such parameter and names its own page.
    const res = await api('POST', '/api/billing/checkout', {
      success_url: 'https://evil.example/steal',
      cancel_url: 'https://evil.example/steal',
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.id).to.match(/^cs_test_/);
    expect(res.body.url).to.equal(`${stripe.url}/c/pay/${res.body.id}`);
    const customer = await api('GET', '/api/billing/customer');
    expect(customer.status).to.equal(200);
    const atStripe = await stripe.sdk.checkout.sessions.retrieve(res.body.id);
    expect(atStripe).to.include({
      mode: 'setup',
      status: 'open',
      customer: customer.body.id,
      currency: 'usd',
      client_reference_id: me.tenant,
      success_url: `${billingPage}?checkout_session={CHECKOUT_SESSION_ID}`,
      cancel_url: `${billingPage}?checkout=canceled`,
    });
    // Not complete yet: nothing to add.
    const early = await api('POST', '/api/billing/checkout/complete', { session_id: res.body.id });
    expect(early.status).to.equal(409);
    expect(early.body.code).to.equal('checkout_not_complete');
  });

  it('adds the card entered on the hosted page, first as the default, and refuses a replay', async () => {
    const session = await checkout();
    const page = await fetch(session.url);
    expect(page.status).to.equal(200);
    expect(await page.text()).to.contain('<label for="number">Card number</label>');
    const wrong = await enterCard(session.url, { ...visa, number: '4242 4242 4242 4241' });
    expect(wrong.status).to.equal(400);
    expect(wrong.text).to.contain('Your card number is incorrect.');
    const past = await enterCard(session.url, { ...visa, expiry: '01 / 20' });
    expect(past.status).to.equal(400);
    expect(past.text).to.contain('in the past');

    const saved = await enterCard(session.url, visa);
    expect(saved.status).to.equal(303);
    expect(saved.location).to.equal(`${billingPage}?checkout_session=${session.id}`);
    const done = await api('POST', '/api/billing/checkout/complete', { session_id: session.id });
    expect(done.status, JSON.stringify(done.body)).to.equal(200);
    expect(done.body.payment_methods).to.have.length(1);
    expect(done.body.payment_methods[0]).to.include({
      number: '**** **** **** 4242',
      brand: 'visa',
      exp_month: 12,
      exp_year: 2034,
      default: true,
    });
    const atStripe = (await stripe.sdk.customers.retrieve(done.body.id)) as Stripe.Customer;
    expect(atStripe.invoice_settings.default_payment_method).to.equal(done.body.payment_methods[0].id);

    const replay = await api('POST', '/api/billing/checkout/complete', { session_id: session.id });
    expect(replay.status).to.equal(409);
    expect(replay.body).to.deep.equal({
      message: 'this card entry was already completed',
      code: 'checkout_already_completed',
    });
    // A replay after the card was removed does not bring it back.
    const card = done.body.payment_methods[0].id as string;
    expect((await api('POST', '/api/billing/paymentmethod/detach', { id: card })).status).to.equal(200);
    expect((await api('POST', '/api/billing/checkout/complete', { session_id: session.id })).status).to.equal(
      409,
    );
    expect((await api('GET', '/api/billing/customer')).body.payment_methods).to.deep.equal([]);
  });

  it('adds a second card without changing the default', async () => {
    const first = await checkout();
    expect((await enterCard(first.url, visa)).status).to.equal(303);
    expect((await api('POST', '/api/billing/checkout/complete', { session_id: first.id })).status).to.equal(
      200,
    );
    const second = await checkout();
    const saved = await enterCard(second.url, { ...visa, number: '5555 5555 5555 4444', expiry: '07/2031' });
    expect(saved.status).to.equal(303);
    const done = await api('POST', '/api/billing/checkout/complete', { session_id: second.id });
    expect(done.status).to.equal(200);
    const cards = (done.body.payment_methods as { number: string; default: boolean; exp_year: number }[])
      .map((m) => [m.number.slice(-4), m.default, m.exp_year])
      .sort();
    expect(cards).to.deep.equal([
      ['4242', true, 2034],
      ['4444', false, 2031],
    ]);
  });

  it("refuses another namespace's session, an unknown one and a malformed id, without using them up", async () => {
    const theirs = await checkout(other.token);
    expect((await enterCard(theirs.url, visa)).status).to.equal(303);
    const before = (await api('GET', '/api/billing/customer')).body.payment_methods.length;
    const stolen = await api('POST', '/api/billing/checkout/complete', { session_id: theirs.id });
    expect(stolen.status).to.equal(404);
    expect(stolen.body.message).to.match(/checkout session/);
    expect((await api('GET', '/api/billing/customer')).body.payment_methods).to.have.length(before);
    // Its own namespace still completes it.
    const own = await api('POST', '/api/billing/checkout/complete', { session_id: theirs.id }, other.token);
    expect(own.status, JSON.stringify(own.body)).to.equal(200);
    expect(own.body.payment_methods).to.have.length(1);
    // A session made at Stripe for this namespace's customer but not opened here is unknown too.
    const customer = (await api('GET', '/api/billing/customer')).body.id as string;
    const outside = await stripe.sdk.checkout.sessions.create({
      mode: 'setup',
      customer,
      currency: 'usd',
      success_url: 'https://evil.example/done',
    });
    expect((await api('POST', '/api/billing/checkout/complete', { session_id: outside.id })).status).to.equal(
      404,
    );
    expect(
      (await api('POST', '/api/billing/checkout/complete', { session_id: 'cs_test_unknown' })).status,
    ).to.equal(404);
    for (const session_id of ['pm_card_visa', 'cs_../x', '']) {
      const res = await api('POST', '/api/billing/checkout/complete', { session_id });
      expect(res.status, session_id).to.equal(400);
    }
    expect((await api('POST', '/api/billing/checkout/complete', {})).status).to.equal(400);
  });

  it('leaves card entry and the price to the owner', async () => {
    // The cloud edition adds members by e-mailed invitation; the accepted membership is written as accepting does.
    const made = await api('POST', '/api/admin/users', {
      name: 'Billing Admin',
      username: 'billing-admin',
      email: 'billing-admin@example.com',
      password: 'billing-admin-password-1',
    });
    expect(made.status, JSON.stringify(made.body)).to.equal(200);
    await server.kernel.container.cradle
      .db('namespace_members')
      .insert({ tenant_id: me.tenant, user_id: made.body.id, role: 'administrator', status: 'accepted' });
    const signedIn = await server.login('billing-admin', 'billing-admin-password-1');
    const admin = (await api('GET', `/api/auth/token/${me.tenant}`, undefined, signedIn.token))
      .body as LoginAnswer;
    expect(admin.role).to.equal('administrator');
    for (const [method, path, body] of [
      ['GET', '/api/billing/price'],
      ['POST', '/api/billing/checkout'],
      ['POST', '/api/billing/checkout/complete', { session_id: 'cs_test_abc' }],
    ] as [string, string, unknown?][]) {
      expect((await api(method, path, body, admin.token)).status, `${method} ${path}`).to.equal(403);
    }
  });

  it('answers 424 provider_unavailable on the Checkout and price calls while Stripe is away', async () => {
    const session = await checkout();
    expect((await enterCard(session.url, visa)).status).to.equal(303);
    for (const outage of ['refuse', 'error'] as const) {
      stripe.outage = outage;
      for (const [method, path, body] of [
        ['GET', '/api/billing/price'],
        ['POST', '/api/billing/checkout'],
        ['POST', '/api/billing/checkout/complete', { session_id: session.id }],
      ] as [string, string, unknown?][]) {
        const res = await api(method, path, body);
        expect(res.status, `${outage} ${method} ${path}`).to.equal(424);
        expect(res.body).to.deep.equal({
          message: 'the payment provider did not answer; try again in a moment',
          code: 'provider_unavailable',
        });
      }
    }
    stripe.outage = 'none';
    // The session Stripe could not be asked about is still there to complete.
    expect((await api('POST', '/api/billing/checkout/complete', { session_id: session.id })).status).to.equal(
      200,
    );
  });

  it('lists 424 among the answers of every billing call in the OpenAPI document', async () => {
    const doc = (await server.api('GET', '/openapi/cloud.json')).body as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    const billing = Object.entries(doc.paths)
      .filter(([p]) => p.startsWith('/api/billing/'))
      .flatMap(([p, ops]) => Object.entries(ops).map(([method, op]) => [`${method} ${p}`, op] as const));
    // The calls above and the webhook.
    expect(billing.map(([call]) => call)).to.have.length(everyCall.length + 1);
    for (const [call, op] of billing) expect(Object.keys(op.responses), call).to.include('424');
    const responses = (path: string, method: string) =>
      Object.keys(doc.paths[path]?.[method]?.responses ?? {});
    expect(responses('/api/billing/checkout/complete', 'post')).to.include.members([
      '200',
      '400',
      '404',
      '409',
      '424',
    ]);
    expect(responses('/api/billing/subscription', 'post')).to.include.members(['200', '402', '404', '424']);
    expect(responses('/api/billing/paymentmethod/attach', 'post')).to.include.members([
      '200',
      '402',
      '404',
      '424',
    ]);
    // Only what a call can answer: making a customer charges nothing.
    expect(responses('/api/billing/customer', 'post')).to.not.include('402');
  });
});

describe('billing (cloud): a server without Stripe', function () {
  this.timeout(60_000);
  let server: TestServer;
  let me: LoginAnswer;

  before(async () => {
    server = await startServer({ edition: 'cloud', ssh: false });
    me = await server.setup();
  });
  after(async () => {
    await server?.stop();
  });

  it('answers 424 billing_not_configured on every billing call, the same way', async () => {
    for (const [method, path, body] of everyCall) {
      const res = await server.api(method, path, { token: me.token, body });
      expect(res.status, `${method} ${path}`).to.equal(424);
      expect(res.body, `${method} ${path}`).to.deep.equal({
        message: 'billing is not set up on this server',
        code: 'billing_not_configured',
      });
    }
    const webhook = await server.api('POST', '/api/billing/webhook', {
      body: { id: 'evt_1', type: 'invoice.paid' },
      headers: { 'stripe-signature': 't=1,v1=00' },
    });
    expect(webhook.status).to.equal(424);
    expect(webhook.body.code).to.equal('billing_not_configured');
  });

  it('still refuses a caller without a token, and keeps the free devices rule', async () => {
    expect((await server.api('GET', '/api/billing/subscription')).status).to.equal(401);
    const ns = await server.api('GET', `/api/namespaces/${me.tenant}`, { token: me.token });
    expect(ns.body.max_devices).to.equal(3);
  });
});

describe('billing (cloud): a plan Stripe does not know', function () {
  this.timeout(60_000);
  let stripe: FakeStripe;
  let server: TestServer;
  let me: LoginAnswer;

  before(async () => {
    stripe = await startFakeStripe();
    server = await startServer({
      edition: 'cloud',
      ssh: false,
      overrides: { billing: { ...billingSettings(stripe), stripePlan: 'price_not_at_stripe' } },
    });
    me = await server.setup();
  });
  after(async () => {
    await server?.stop();
    await stripe?.stop();
  });

  it("answers the price and card entry with 424 billing_not_configured: it is the server's configuration", async () => {
    for (const [method, path] of [
      ['GET', '/api/billing/price'],
      ['POST', '/api/billing/checkout'],
    ]) {
      const res = await server.api(method as string, path as string, { token: me.token });
      expect(res.status, `${method} ${path}`).to.equal(424);
      expect(res.body).to.deep.equal({
        message: 'the plan configured on this server does not exist at Stripe',
        code: 'billing_not_configured',
      });
    }
  });
});
