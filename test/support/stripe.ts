import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';

/**
 * A local Stripe for the billing tests (the payment provider is the one part outside the machine). Two layers:
 *
 * - `stripe-stateful-mock` (npm) serves what it knows to the real SDK: customers, products, plans, prices,
 *   subscriptions (made with `items: [{ plan }]`) and subscription items.
 * - In front of it, this double serves what the mock lacks, following Stripe's published API: payment methods
 *   (create, retrieve, attach, detach, list a customer's, the `pm_card_*` test methods), invoices (list, retrieve;
 *   one per new subscription, paid), subscription cancellation (`DELETE /v1/subscriptions/:id`), a plan read as a
 *   price (`GET /v1/prices/:id`, as Stripe answers for a plan id), Checkout in setup mode (create and retrieve a
 *   session, with `expand[]=setup_intent`; retrieve a setup intent) with the hosted card page at the session's
 *   `url`, Stripe's error bodies, and webhooks: events in Stripe's `event` shape, signed with the SDK's own
 *   `webhooks.generateTestHeaderString`, so the server verifies them with the production code.
 *
 * Every object the double makes is typed with the SDK's types (generated from Stripe's OpenAPI description), so
 * the compiler checks each field against Stripe's published shapes.
 */
export interface FakeStripe {
  /** The API base for `billing.stripeApiBase`. */
  url: string;
  secretKey: string;
  webhookSecret: string;
  /** A monthly plan, 500 cents per unit (a device). */
  plan: string;
  /** The real SDK pointed at this server, for test set-up. */
  sdk: Stripe;
  /** Where events go (the server's `/api/billing/webhook`). */
  webhookUrl: string | undefined;
  /** `refuse`: every connection is dropped; `error`: every call answers 500 with Stripe's api_error body. */
  outage: 'none' | 'refuse' | 'error';
  /** Calls the double and the mock received, as `METHOD /path`. */
  calls: string[];
  /** Events queued and not yet delivered. */
  pending: Stripe.Event[];
  /** Delivers the queued events, signed, in order; returns the server's answers. */
  deliver(): Promise<{ type: string; status: number }[]>;
  /** Queues an event of `type` about `object`. */
  event(type: string, object: object, previous?: Record<string, unknown>): Stripe.Event;
  /** Sends a body with the given signature header as Stripe would (for refusal tests). */
  post(body: string, signature: string | undefined): Promise<{ status: number; body: unknown }>;
  /** Changes a subscription's status as Stripe would on renewal or dunning, and queues the event saying so. */
  setSubscriptionStatus(id: string, status: Stripe.Subscription.Status): Stripe.Event;
  subscription(id: string): Stripe.Subscription;
  /** A Checkout session as the double holds it. */
  checkoutSession(id: string): Stripe.Checkout.Session | undefined;
  invoice(id: string): Stripe.Invoice | undefined;
  stop(): Promise<void>;
}

const require = createRequire(import.meta.url);
// The mock's own store of subscriptions: cancellation and status changes are made on its records, so its GET
// answers stay in agreement with what the double says.
const mockSubscriptions = require('stripe-stateful-mock/dist/api/subscriptions.js').subscriptions as {
  retrieve(account: string, id: string, param: string): Record<string, unknown>;
};
const mockCustomers = require('stripe-stateful-mock/dist/api/customers.js').customers as {
  retrieve(account: string, id: string, param: string): Record<string, unknown>;
};
const { createExpressApp } = require('stripe-stateful-mock') as { createExpressApp(): http.RequestListener };

const ACCOUNT = 'acct_default';
const now = () => Math.floor(Date.now() / 1000);
const id = (prefix: string) => `${prefix}_${randomBytes(12).toString('base64url').replace(/[-_]/g, 'x')}`;

/** Stripe's test cards (docs.stripe.com/testing): the `pm_card_*` ids and the numbers behind them. */
const testCards: Record<string, { brand: string; last4: string; funding: string; country: string }> = {
  pm_card_visa: { brand: 'visa', last4: '4242', funding: 'credit', country: 'US' },
  pm_card_visa_debit: { brand: 'visa', last4: '5556', funding: 'debit', country: 'US' },
  pm_card_mastercard: { brand: 'mastercard', last4: '4444', funding: 'credit', country: 'US' },
  pm_card_amex: { brand: 'amex', last4: '8431', funding: 'credit', country: 'US' },
  pm_card_br: { brand: 'visa', last4: '0002', funding: 'credit', country: 'BR' },
};
const cardNumbers: Record<string, string> = {
  '4242424242424242': 'pm_card_visa',
  '4000056655665556': 'pm_card_visa_debit',
  '5555555555554444': 'pm_card_mastercard',
  '378282246310005': 'pm_card_amex',
};

/** Stripe's error body (docs.stripe.com/api/errors). */
function stripeError(
  status: number,
  error: { type: string; message: string; code?: string; param?: string },
): { status: number; body: unknown } {
  return {
    status,
    body: {
      error: {
        ...error,
        ...(error.code ? { doc_url: `https://stripe.com/docs/error-codes/${error.code}` } : {}),
      },
    },
  };
}

const missing = (what: string, value: string, param = 'id') =>
  stripeError(404, {
    type: 'invalid_request_error',
    code: 'resource_missing',
    param,
    message: `No such ${what}: '${value}'`,
  });

/** `application/x-www-form-urlencoded` with Stripe's bracket notation (`items[0][plan]=...`) into an object. */
export function parseForm(text: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const parts = key.split(/\[|\]\[|\]/).filter((p) => p !== '');
    let cur: Record<string, unknown> = out;
    for (const [i, part] of parts.entries()) {
      if (i === parts.length - 1) {
        cur[part] = value;
        continue;
      }
      cur[part] ??= {};
      cur = cur[part] as Record<string, unknown>;
    }
  }
  return out;
}

export async function startFakeStripe(): Promise<FakeStripe> {
  const mockApp = createExpressApp();
  const mockServer = http.createServer(mockApp);
  await new Promise<void>((resolve) => mockServer.listen(0, '127.0.0.1', resolve));
  const mockUrl = `http://127.0.0.1:${(mockServer.address() as AddressInfo).port}`;

  const paymentMethods = new Map<string, Stripe.PaymentMethod>();
  const invoices = new Map<string, Stripe.Invoice>();
  const checkoutSessions = new Map<string, Stripe.Checkout.Session>();
  const setupIntents = new Map<string, Stripe.SetupIntent>();
  const secretKey = `sk_test_${randomBytes(16).toString('hex')}`;
  const webhookSecret = `whsec_${randomBytes(24).toString('base64url')}`;

  const fake = {
    url: '',
    secretKey,
    webhookSecret,
    plan: '',
    webhookUrl: undefined as string | undefined,
    outage: 'none' as FakeStripe['outage'],
    calls: [] as string[],
    pending: [] as Stripe.Event[],
  } as FakeStripe;

  const customerOf = (customer: string): Record<string, unknown> | undefined => {
    try {
      return mockCustomers.retrieve(ACCOUNT, customer, 'customer');
    } catch {
      return undefined;
    }
  };

  const newPaymentMethod = (
    card: (typeof testCards)[string],
    expMonth = 12,
    expYear = new Date().getFullYear() + 3,
  ) => {
    const pm: Stripe.PaymentMethod = {
      id: id('pm'),
      object: 'payment_method',
      allow_redisplay: 'unspecified',
      billing_details: { address: null, email: null, name: null, phone: null, tax_id: null },
      card: {
        brand: card.brand,
        checks: { address_line1_check: null, address_postal_code_check: null, cvc_check: 'pass' },
        country: card.country,
        display_brand: card.brand,
        exp_month: expMonth,
        exp_year: expYear,
        fingerprint: randomBytes(8).toString('hex'),
        funding: card.funding,
        generated_from: null,
        last4: card.last4,
        networks: { available: [card.brand], preferred: null },
        regulated_status: 'unregulated',
        three_d_secure_usage: { supported: true },
        wallet: null,
      },
      created: now(),
      customer: null,
      customer_account: null,
      livemode: false,
      metadata: {},
      type: 'card',
    };
    paymentMethods.set(pm.id, pm);
    return pm;
  };

  const list = <T>(data: T[], url: string): Stripe.ApiList<T> => ({
    object: 'list',
    data,
    has_more: false,
    url,
  });

  /** The invoice Stripe makes for a new subscription: created, finalized and (charged to the card) paid. */
  const firstInvoice = (sub: Record<string, unknown>): Stripe.Invoice => {
    const items = (
      sub.items as {
        data: { id: string; quantity: number; plan: { amount: number | null; currency: string } }[];
      }
    ).data;
    const item = items[0];
    const quantity = item?.quantity ?? 1;
    const amount = (item?.plan.amount ?? 0) * quantity;
    const currency = item?.plan.currency ?? 'usd';
    const start = Number(sub.current_period_start ?? now());
    const end = Number(sub.current_period_end ?? now() + 30 * 86400);
    const customer = String(sub.customer);
    const c = customerOf(customer);
    const invoiceId = String(sub.latest_invoice ?? id('in'));
    const invoice: Stripe.Invoice = {
      id: invoiceId,
      object: 'invoice',
      account_country: 'US',
      account_name: 'Gatehouse test account',
      account_tax_ids: null,
      amount_due: amount,
      amount_overpaid: 0,
      amount_paid: amount,
      amount_remaining: 0,
      amount_shipping: 0,
      application: null,
      attempt_count: 1,
      attempted: true,
      auto_advance: false,
      automatic_tax: { disabled_reason: null, enabled: false, liability: null, provider: null, status: null },
      automatically_finalizes_at: null,
      billing_reason: 'subscription_create',
      collection_method: 'charge_automatically',
      created: now(),
      currency,
      custom_fields: null,
      customer,
      customer_account: null,
      customer_address: null,
      customer_email: (c?.email as string | null) ?? null,
      customer_name: (c?.name as string | null) ?? null,
      customer_phone: null,
      customer_shipping: null,
      customer_tax_exempt: 'none',
      customer_tax_ids: [],
      default_payment_method: null,
      default_source: null,
      default_tax_rates: [],
      description: null,
      discounts: [],
      due_date: null,
      effective_at: now(),
      ending_balance: 0,
      footer: null,
      from_invoice: null,
      hosted_invoice_url: `${fake.url}/invoice/${invoiceId}`,
      invoice_pdf: `${fake.url}/invoice/${invoiceId}/pdf`,
      issuer: { type: 'self' },
      last_finalization_error: null,
      latest_revision: null,
      lines: list(
        [
          {
            id: id('il'),
            object: 'line_item',
            amount,
            currency,
            description: `${quantity} × device (at ${(item?.plan.amount ?? 0) / 100} / month)`,
            discount_amounts: [],
            discountable: true,
            discounts: [],
            invoice: invoiceId,
            livemode: false,
            metadata: {},
            parent: {
              invoice_item_details: null,
              subscription_item_details: {
                invoice_item: null,
                proration: false,
                proration_details: { credited_items: null },
                subscription: String(sub.id),
                subscription_item: item?.id ?? '',
              },
              type: 'subscription_item_details',
            },
            period: { end, start },
            pretax_credit_amounts: [],
            pricing: null,
            quantity,
            quantity_decimal: null,
            subscription: String(sub.id),
            subtotal: amount,
            taxes: [],
          } satisfies Stripe.InvoiceLineItem,
        ],
        `/v1/invoices/${invoiceId}/lines`,
      ),
      livemode: false,
      metadata: {},
      next_payment_attempt: null,
      number: `GH-${String(invoices.size + 1).padStart(4, '0')}`,
      on_behalf_of: null,
      parent: {
        quote_details: null,
        subscription_details: { metadata: {}, subscription: String(sub.id) },
        type: 'subscription_details',
      },
      payment_settings: { default_mandate: null, payment_method_options: null, payment_method_types: null },
      period_end: start,
      period_start: start,
      post_payment_credit_notes_amount: 0,
      pre_payment_credit_notes_amount: 0,
      receipt_number: null,
      rendering: null,
      shipping_cost: null,
      shipping_details: null,
      starting_balance: 0,
      statement_descriptor: null,
      status: 'paid',
      status_transitions: {
        finalized_at: now(),
        marked_uncollectible_at: null,
        paid_at: now(),
        voided_at: null,
      },
      subtotal: amount,
      subtotal_excluding_tax: amount,
      test_clock: null,
      total: amount,
      total_discount_amounts: [],
      total_excluding_tax: amount,
      total_pretax_credit_amounts: [],
      total_taxes: [],
      webhooks_delivered_at: null,
    };
    invoices.set(invoice.id, invoice);
    return invoice;
  };

  /**
   * The subscription as the current API gives it: the period on each item (Stripe moved it there in 2025-03-31);
   * the mock keeps it on the subscription, where it stays too for the older versions.
   */
  const currentShape = (sub: Record<string, unknown>): Stripe.Subscription => {
    const items = sub.items as { data: Record<string, unknown>[] };
    return {
      ...sub,
      items: {
        ...items,
        data: items.data.map((i) => ({
          ...i,
          current_period_start: sub.current_period_start,
          current_period_end: sub.current_period_end,
        })),
      },
    } as unknown as Stripe.Subscription;
  };

  fake.event = (type, object, previous) => {
    const event = {
      id: id('evt'),
      object: 'event',
      api_version: Stripe.API_VERSION,
      context: undefined,
      created: now(),
      data: { object, ...(previous ? { previous_attributes: previous } : {}) },
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type,
    } as unknown as Stripe.Event;
    fake.pending.push(event);
    return event;
  };

  fake.post = async (body, signature) => {
    if (!fake.webhookUrl) throw new Error('no webhook URL set');
    const res = await fetch(fake.webhookUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json; charset=utf-8',
        'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
        ...(signature ? { 'stripe-signature': signature } : {}),
      },
      body,
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // keep the text
    }
    return { status: res.status, body: parsed };
  };

  fake.deliver = async () => {
    const answers: { type: string; status: number }[] = [];
    while (fake.pending.length > 0) {
      const event = fake.pending.shift() as Stripe.Event;
      const payload = JSON.stringify(event, null, 2);
      const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: webhookSecret });
      answers.push({ type: event.type, status: (await fake.post(payload, header)).status });
    }
    return answers;
  };

  fake.subscription = (subId) => currentShape(mockSubscriptions.retrieve(ACCOUNT, subId, 'id'));
  fake.invoice = (invoiceId) => invoices.get(invoiceId);
  fake.checkoutSession = (sessionId) => checkoutSessions.get(sessionId);

  /** Stripe's Checkout Session of `mode=setup` (docs.stripe.com/api/checkout/sessions/object), still open. */
  const newCheckoutSession = (form: Record<string, unknown>, customer: string): Stripe.Checkout.Session => {
    const sessionId = `cs_test_${randomBytes(24).toString('base64url').replace(/[-_]/g, 'x')}`;
    const types = form.payment_method_types as Record<string, string> | undefined;
    const session = {
      id: sessionId,
      object: 'checkout.session',
      adaptive_pricing: null,
      after_expiration: null,
      allow_promotion_codes: null,
      amount_subtotal: null,
      amount_total: null,
      automatic_tax: { enabled: false, liability: null, provider: null, status: null },
      billing_address_collection: null,
      cancel_url: typeof form.cancel_url === 'string' ? form.cancel_url : null,
      client_reference_id: typeof form.client_reference_id === 'string' ? form.client_reference_id : null,
      client_secret: null,
      consent: null,
      consent_collection: null,
      created: now(),
      currency: typeof form.currency === 'string' ? form.currency : null,
      custom_fields: [],
      custom_text: {
        after_submit: null,
        shipping_address: null,
        submit: null,
        terms_of_service_acceptance: null,
      },
      customer,
      customer_creation: null,
      customer_details: null,
      customer_email: null,
      expires_at: now() + 24 * 3600,
      invoice: null,
      invoice_creation: null,
      livemode: false,
      locale: null,
      metadata: (form.metadata as Record<string, string> | undefined) ?? {},
      mode: 'setup',
      payment_intent: null,
      payment_link: null,
      payment_method_collection: 'always',
      payment_method_configuration_details: null,
      payment_method_options: {},
      payment_method_types: types ? Object.values(types) : ['card'],
      payment_status: 'no_payment_required',
      phone_number_collection: { enabled: false },
      recovered_from: null,
      setup_intent: null,
      shipping_address_collection: null,
      shipping_cost: null,
      shipping_options: [],
      status: 'open',
      submit_type: null,
      subscription: null,
      success_url: String(form.success_url),
      total_details: null,
      ui_mode: 'hosted',
      url: `${fake.url}/c/pay/${sessionId}`,
    } as unknown as Stripe.Checkout.Session;
    checkoutSessions.set(sessionId, session);
    return session;
  };

  /** Stripe's SetupIntent (docs.stripe.com/api/setup_intents/object) of a card saved through Checkout. */
  const succeededSetupIntent = (customer: string, paymentMethod: string): Stripe.SetupIntent => {
    const intentId = id('seti');
    const intent = {
      id: intentId,
      object: 'setup_intent',
      application: null,
      automatic_payment_methods: null,
      cancellation_reason: null,
      client_secret: `${intentId}_secret_${randomBytes(12).toString('hex')}`,
      created: now(),
      customer,
      description: null,
      flow_directions: null,
      last_setup_error: null,
      latest_attempt: null,
      livemode: false,
      mandate: null,
      metadata: {},
      next_action: null,
      on_behalf_of: null,
      payment_method: paymentMethod,
      payment_method_configuration_details: null,
      payment_method_options: {},
      payment_method_types: ['card'],
      single_use_mandate: null,
      status: 'succeeded',
      usage: 'off_session',
    } as unknown as Stripe.SetupIntent;
    setupIntents.set(intentId, intent);
    return intent;
  };

  /** `expand[]=setup_intent` (or `expand[0]=...`, as the SDK writes it) on a retrieve. */
  const expands = (query: URLSearchParams, field: string) =>
    [...query.entries()].some(([k, v]) => k.startsWith('expand') && v === field);

  fake.setSubscriptionStatus = (subId, status) => {
    const record = mockSubscriptions.retrieve(ACCOUNT, subId, 'id');
    const previous = { status: record.status };
    record.status = status;
    if (status === 'canceled') {
      record.canceled_at = now();
      record.ended_at = now();
      return fake.event('customer.subscription.deleted', currentShape(record), previous);
    }
    return fake.event('customer.subscription.updated', currentShape(record), previous);
  };

  /** The routes the double serves; anything else goes to the mock. */
  const serve = async (
    method: string,
    path: string,
    query: URLSearchParams,
    form: Record<string, unknown>,
    rawBody: string,
    headers: http.IncomingHttpHeaders,
  ): Promise<{ status: number; body: unknown } | undefined> => {
    let m: RegExpMatchArray | null;
    if (method === 'POST' && path === '/v1/payment_methods') {
      const card = (form.card ?? {}) as Record<string, string>;
      const test = card.token ? undefined : cardNumbers[(card.number ?? '').replace(/\s/g, '')];
      if (form.type !== 'card' || !test) {
        return stripeError(402, {
          type: 'card_error',
          code: 'incorrect_number',
          param: 'card[number]',
          message: 'Your card number is incorrect.',
        });
      }
      const pm = newPaymentMethod(
        testCards[test] as (typeof testCards)[string],
        Number(card.exp_month),
        Number(card.exp_year),
      );
      return { status: 200, body: pm };
    }
    m = method === 'GET' ? path.match(/^\/v1\/payment_methods\/([^/]+)$/) : null;
    if (m) {
      const pm = paymentMethods.get(m[1] as string);
      return pm ? { status: 200, body: pm } : missing('PaymentMethod', m[1] as string, 'payment_method');
    }
    m = method === 'POST' ? path.match(/^\/v1\/payment_methods\/([^/]+)\/attach$/) : null;
    if (m) {
      const pmId = m[1] as string;
      const customer = String(form.customer ?? '');
      if (!customer) {
        return stripeError(400, {
          type: 'invalid_request_error',
          code: 'parameter_missing',
          param: 'customer',
          message: 'Missing required param: customer.',
        });
      }
      if (!customerOf(customer)) return missing('customer', customer, 'customer');
      // Attaching a test PaymentMethod (pm_card_visa, ...) makes a new PaymentMethod of that card each time.
      const test = testCards[pmId];
      const pm = test ? newPaymentMethod(test) : paymentMethods.get(pmId);
      if (!pm) return missing('PaymentMethod', pmId, 'payment_method');
      if (pm.customer && pm.customer !== customer) {
        return stripeError(400, {
          type: 'invalid_request_error',
          message: 'The payment method you provided has already been attached to a customer.',
        });
      }
      pm.customer = customer;
      return { status: 200, body: pm };
    }
    m = method === 'POST' ? path.match(/^\/v1\/payment_methods\/([^/]+)\/detach$/) : null;
    if (m) {
      const pm = paymentMethods.get(m[1] as string);
      if (!pm) return missing('PaymentMethod', m[1] as string, 'payment_method');
      if (!pm.customer) {
        return stripeError(400, {
          type: 'invalid_request_error',
          message:
            'The payment method you provided is not attached to a customer so detachment is impossible.',
        });
      }
      const owner = customerOf(String(pm.customer));
      const settings = owner?.invoice_settings as { default_payment_method?: string | null } | undefined;
      if (settings?.default_payment_method === pm.id) settings.default_payment_method = null;
      pm.customer = null;
      return { status: 200, body: pm };
    }
    m = method === 'GET' ? path.match(/^\/v1\/customers\/([^/]+)\/payment_methods$/) : null;
    if (m) {
      const customer = m[1] as string;
      if (!customerOf(customer)) return missing('customer', customer, 'customer');
      const type = query.get('type');
      const data = [...paymentMethods.values()].filter(
        (pm) => pm.customer === customer && (!type || pm.type === type),
      );
      return { status: 200, body: list(data.reverse(), `/v1/customers/${customer}/payment_methods`) };
    }
    if (method === 'GET' && path === '/v1/invoices') {
      const data = [...invoices.values()].filter(
        (i) =>
          (!query.get('customer') || i.customer === query.get('customer')) &&
          (!query.get('subscription') ||
            i.parent?.subscription_details?.subscription === query.get('subscription')),
      );
      return { status: 200, body: list(data.reverse(), '/v1/invoices') };
    }
    m = method === 'GET' ? path.match(/^\/v1\/invoices\/([^/]+)$/) : null;
    if (m) {
      const invoice = invoices.get(m[1] as string);
      return invoice ? { status: 200, body: invoice } : missing('invoice', m[1] as string, 'invoice');
    }
    if (method === 'POST' && path === '/v1/customers') {
      // The mock drops the name Stripe keeps (docs.stripe.com/api/customers/create): made there, named here.
      const res = await fetch(`${mockUrl}${path}`, {
        method,
        headers: forwardHeaders(headers),
        body: rawBody,
      });
      const body = (await res.json()) as Record<string, unknown>;
      if (res.status === 200 && typeof form.name === 'string') {
        const record = customerOf(String(body.id));
        if (record) record.name = form.name;
        body.name = form.name;
      }
      return { status: res.status, body };
    }
    if (method === 'POST' && path === '/v1/subscriptions') {
      // The mock makes the subscription; Stripe then bills its first period and says so in events.
      const res = await fetch(`${mockUrl}${path}`, {
        method,
        headers: forwardHeaders(headers),
        body: rawBody,
      });
      const body = (await res.json()) as Record<string, unknown>;
      if (res.status !== 200) return { status: res.status, body };
      const sub = currentShape(body);
      const invoice = firstInvoice(body);
      fake.event('customer.subscription.created', sub);
      fake.event('invoice.created', { ...invoice, status: 'draft' });
      fake.event('invoice.finalized', { ...invoice, status: 'open' });
      fake.event('invoice.paid', invoice);
      return { status: 200, body: sub };
    }
    m = method === 'DELETE' ? path.match(/^\/v1\/subscriptions\/([^/]+)$/) : null;
    if (m) {
      let record: Record<string, unknown>;
      try {
        record = mockSubscriptions.retrieve(ACCOUNT, m[1] as string, 'id');
      } catch {
        return missing('subscription', m[1] as string);
      }
      if (record.status === 'canceled') {
        return stripeError(400, {
          type: 'invalid_request_error',
          code: 'resource_missing',
          message: `No such subscription: '${String(record.id)}'`,
        });
      }
      const previous = { status: record.status };
      record.status = 'canceled';
      record.canceled_at = now();
      record.ended_at = now();
      record.cancel_at_period_end = false;
      const sub = currentShape(record);
      fake.event('customer.subscription.deleted', sub, previous);
      return { status: 200, body: sub };
    }
    if (method === 'POST' && path === '/v1/checkout/sessions') {
      for (const param of ['mode', 'success_url']) {
        if (typeof form[param] !== 'string' || form[param] === '') {
          return stripeError(400, {
            type: 'invalid_request_error',
            code: 'parameter_missing',
            param,
            message: `Missing required param: ${param}.`,
          });
        }
      }
      if (form.mode !== 'setup') {
        return stripeError(400, {
          type: 'invalid_request_error',
          param: 'mode',
          message: 'This local Stripe serves Checkout in setup mode only.',
        });
      }
      if (!form.currency && !form.payment_method_types) {
        return stripeError(400, {
          type: 'invalid_request_error',
          code: 'parameter_missing',
          param: 'currency',
          message: 'You must provide `currency` when using setup mode with dynamic payment methods.',
        });
      }
      const customer = String(form.customer ?? '');
      if (!customer || !customerOf(customer)) return missing('customer', customer, 'customer');
      return { status: 200, body: newCheckoutSession(form, customer) };
    }
    m = method === 'GET' ? path.match(/^\/v1\/checkout\/sessions\/([^/]+)$/) : null;
    if (m) {
      const session = checkoutSessions.get(m[1] as string);
      if (!session) return missing('checkout.session', m[1] as string, 'session');
      const intent = typeof session.setup_intent === 'string' ? setupIntents.get(session.setup_intent) : null;
      return {
        status: 200,
        body: expands(query, 'setup_intent') && intent ? { ...session, setup_intent: intent } : session,
      };
    }
    m = method === 'GET' ? path.match(/^\/v1\/setup_intents\/([^/]+)$/) : null;
    if (m) {
      const intent = setupIntents.get(m[1] as string);
      return intent ? { status: 200, body: intent } : missing('setup_intent', m[1] as string, 'intent');
    }
    m = method === 'GET' ? path.match(/^\/v1\/prices\/([^/]+)$/) : null;
    if (m) {
      // Stripe answers a plan's id as a price (plans are prices of the older API); the mock keeps them apart.
      const asPrice = await fetch(`${mockUrl}${path}`, { headers: forwardHeaders(headers) });
      if (asPrice.status !== 404) return { status: asPrice.status, body: await asPrice.json() };
      const res = await fetch(`${mockUrl}/v1/plans/${m[1]}`, { headers: forwardHeaders(headers) });
      if (res.status !== 200) return missing('price', m[1] as string);
      const plan = (await res.json()) as Stripe.Plan;
      const price = {
        id: plan.id,
        object: 'price',
        active: plan.active,
        billing_scheme: plan.billing_scheme,
        created: plan.created,
        currency: plan.currency,
        currency_options: undefined,
        custom_unit_amount: null,
        livemode: false,
        lookup_key: null,
        metadata: plan.metadata ?? {},
        nickname: plan.nickname,
        product: plan.product,
        recurring: {
          interval: plan.interval,
          interval_count: plan.interval_count,
          meter: null,
          trial_period_days: plan.trial_period_days,
          usage_type: plan.usage_type,
        },
        tax_behavior: 'unspecified',
        tiers_mode: plan.tiers_mode,
        transform_quantity: plan.transform_usage,
        type: 'recurring',
        unit_amount: plan.amount,
        unit_amount_decimal: plan.amount_decimal,
      } as Stripe.Price;
      return { status: 200, body: price };
    }
    return undefined;
  };

  /**
   * Stripe's hosted Checkout page of a setup-mode session: a card form; a saved card becomes a PaymentMethod
   * attached to the session's customer with a succeeded SetupIntent, the session is complete, and the browser goes
   * to `success_url` (with `{CHECKOUT_SESSION_ID}` replaced); Cancel goes to `cancel_url`.
   */
  const hostedPage = (
    method: string,
    sessionId: string,
    form: URLSearchParams,
  ): { status: number; headers: Record<string, string>; body: string } => {
    const session = checkoutSessions.get(sessionId);
    const page = (status: number, inner: string) => ({
      status,
      headers: { 'content-type': 'text/html; charset=utf-8' },
      body: `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Save a card - Stripe test mode</title><style>body{font-family:sans-serif;max-width:28rem;margin:2rem auto;padding:0 1rem}label{display:block;margin-top:1rem}input{display:block;width:100%;padding:.5rem;font-size:1rem;box-sizing:border-box}button{margin-top:1.5rem;padding:.6rem 1.2rem;font-size:1rem}.error{color:#a00}</style></head><body><main>${inner}</main></body></html>`,
    });
    if (!session || session.status === 'expired' || session.expires_at < now()) {
      return page(404, '<h1>This card entry has expired</h1><p>Go back and start again.</p>');
    }
    if (session.status === 'complete') {
      return page(200, '<h1>This card is saved</h1><p>You can close this page.</p>');
    }
    const html = (s: string) =>
      s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string);
    const formPage = (error?: string) =>
      page(
        error ? 400 : 200,
        `<h1>Save a card</h1><p>Test mode: use a Stripe test card such as 4242 4242 4242 4242.</p>${
          error ? `<p class="error" role="alert">${html(error)}</p>` : ''
        }<form method="post"><label for="number">Card number</label><input id="number" name="number" inputmode="numeric" autocomplete="cc-number" required value="${html(
          form.get('number') ?? '',
        )}"><label for="expiry">Expiry (MM / YY)</label><input id="expiry" name="expiry" autocomplete="cc-exp" placeholder="MM / YY" required value="${html(
          form.get('expiry') ?? '',
        )}"><label for="cvc">CVC</label><input id="cvc" name="cvc" inputmode="numeric" autocomplete="cc-csc" required><label for="name">Name on card</label><input id="name" name="name" autocomplete="cc-name" value="${html(
          form.get('name') ?? '',
        )}"><button type="submit">Save card</button></form>${
          session.cancel_url ? `<p><a href="${html(session.cancel_url)}">Cancel</a></p>` : ''
        }`,
      );
    if (method !== 'POST') return formPage();
    const test = cardNumbers[(form.get('number') ?? '').replace(/\s/g, '')];
    if (!test) return formPage('Your card number is incorrect.');
    const expiry = (form.get('expiry') ?? '').match(/^\s*(\d{1,2})\s*\/\s*(\d{2}|\d{4})\s*$/);
    const month = Number(expiry?.[1]);
    const year = expiry ? Number(expiry[2]?.length === 2 ? `20${expiry[2]}` : expiry[2]) : 0;
    const nowDate = new Date();
    if (!expiry || month < 1 || month > 12) return formPage("Your card's expiration date is incomplete.");
    if (year < nowDate.getFullYear() || (year === nowDate.getFullYear() && month < nowDate.getMonth() + 1)) {
      return formPage("Your card's expiration year is in the past.");
    }
    if (!/^\d{3,4}$/.test(form.get('cvc') ?? '')) return formPage("Your card's security code is incomplete.");
    const customer = String(session.customer);
    const pm = newPaymentMethod(testCards[test] as (typeof testCards)[string], month, year);
    pm.customer = customer;
    pm.billing_details.name = form.get('name') || null;
    const intent = succeededSetupIntent(customer, pm.id);
    session.status = 'complete';
    session.setup_intent = intent.id;
    fake.event('setup_intent.succeeded', intent);
    fake.event('checkout.session.completed', session);
    return {
      status: 303,
      headers: { location: session.success_url?.replace('{CHECKOUT_SESSION_ID}', session.id) ?? '/' },
      body: '',
    };
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://stripe.local');
    fake.calls.push(`${req.method} ${url.pathname}`);
    if (fake.outage === 'refuse') {
      req.socket.destroy();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const hosted = url.pathname.match(/^\/c\/pay\/([^/]+)$/);
      if (hosted && (req.method === 'GET' || req.method === 'POST')) {
        // The hosted page is the browser's, without the secret key.
        const answer = hostedPage(req.method, hosted[1] as string, new URLSearchParams(raw));
        res.writeHead(answer.status, answer.headers);
        res.end(answer.body);
        return;
      }
      const answer = async () => {
        if (fake.outage === 'error') {
          return stripeError(500, { type: 'api_error', message: 'An unknown error occurred' });
        }
        if (!/^Bearer sk_test_/.test(req.headers.authorization ?? '')) {
          return stripeError(401, { type: 'invalid_request_error', message: 'Invalid API Key provided' });
        }
        const mine = await serve(
          req.method ?? 'GET',
          url.pathname,
          url.searchParams,
          parseForm(raw),
          raw,
          req.headers,
        );
        if (mine) return mine;
        const forwarded = await fetch(`${mockUrl}${url.pathname}${url.search}`, {
          method: req.method,
          headers: forwardHeaders(req.headers),
          ...(raw && req.method !== 'GET' && req.method !== 'DELETE' ? { body: raw } : {}),
        });
        return { status: forwarded.status, body: await forwarded.json() };
      };
      answer().then(
        ({ status, body }) => {
          res.writeHead(status, { 'content-type': 'application/json', 'request-id': id('req') });
          res.end(JSON.stringify(body));
        },
        (err: Error) => {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { type: 'api_error', message: err.message } }));
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const base = new URL(fake.url);
  fake.sdk = new Stripe(secretKey, {
    host: base.hostname,
    port: base.port,
    protocol: 'http',
    maxNetworkRetries: 0,
    telemetry: false,
  });
  const plan = await fake.sdk.plans.create({
    amount: 500,
    currency: 'usd',
    interval: 'month',
    product: { name: 'Gatehouse device' },
  });
  fake.plan = plan.id;
  fake.calls.length = 0;
  fake.stop = async () => {
    server.closeAllConnections();
    mockServer.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await new Promise<void>((resolve) => mockServer.close(() => resolve()));
  };
  return fake;
}

function forwardHeaders(headers: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of [
    'authorization',
    'content-type',
    'idempotency-key',
    'stripe-version',
    'stripe-account',
  ]) {
    const value = headers[name];
    if (typeof value === 'string') out[name] = value;
  }
  return out;
}

/** The server's `billing` settings for billing through `fake`. */
export function billingSettings(fake: FakeStripe) {
  return {
    stripeSecretKey: fake.secretKey,
    stripeWebhookSecret: fake.webhookSecret,
    stripePlan: fake.plan,
    stripeApiBase: fake.url,
  };
}
