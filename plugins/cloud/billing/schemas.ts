import { type Static, Type as T } from '@sinclair/typebox';

/** A namespace's subscription statuses: Stripe's, plus `inactive` (none) and `to_cancel_at_end_of_period` (ends at renewal). */
export const subscriptionStatuses = [
  'inactive',
  'active',
  'trialing',
  'incomplete',
  'incomplete_expired',
  'past_due',
  'canceled',
  'unpaid',
  'paused',
  'to_cancel_at_end_of_period',
] as const;
export type SubscriptionStatus = (typeof subscriptionStatuses)[number];

/** Invoice statuses: Stripe's, with its `void` answered as `voided`. */
export const invoiceStatuses = ['draft', 'open', 'paid', 'uncollectible', 'voided'] as const;
export type InvoiceStatus = (typeof invoiceStatuses)[number];

/** A card as anyone may see it: the number's last four digits, and the provider's CVC check, never the CVC. */
export const paymentMethod = T.Object({
  id: T.String(),
  number: T.String({ description: 'Only the last four digits, e.g. `**** **** **** 4242`.' }),
  brand: T.String({ description: 'visa, mastercard, amex, ...' }),
  exp_month: T.Integer(),
  exp_year: T.Integer(),
  cvc: T.String({ description: "The provider's CVC check: pass, fail, unavailable or unchecked." }),
  default: T.Boolean({ description: 'The card the subscription is charged to.' }),
});
export type PaymentMethodView = Static<typeof paymentMethod>;

/** A namespace's billing customer at the payment provider, with its cards. */
export const customer = T.Object({
  id: T.String(),
  name: T.String(),
  email: T.String(),
  payment_methods: T.Array(paymentMethod),
});
export type CustomerView = Static<typeof customer>;

export const invoice = T.Object({
  id: T.String(),
  status: T.Union(invoiceStatuses.map((s) => T.Literal(s))),
  currency: T.String({ description: 'usd or brl' }),
  amount: T.Integer({ description: 'In cents.' }),
});
export type InvoiceView = Static<typeof invoice>;

/** A namespace's subscription and its invoices, as the provider last reported them. */
export const subscription = T.Object({
  id: T.String({ description: 'Empty while the namespace has no subscription.' }),
  active: T.Boolean({
    description: 'Whether the namespace is served as subscribed (active, trialing, past_due).',
  }),
  status: T.Union(subscriptionStatuses.map((s) => T.Literal(s))),
  end_at: T.Integer({ description: 'Unix time the current period ends; 0 without a subscription.' }),
  invoices: T.Array(invoice),
});
export type SubscriptionView = Static<typeof subscription>;

/** An accepted device ranked by its signed-in sessions (the ones kept when no choice is made). */
export const mostUsedDevice = T.Object({
  uid: T.String(),
  name: T.String(),
  sessions: T.Integer({ description: 'sessions that signed in' }),
  last_seen: T.String({ format: 'date-time' }),
});
export type MostUsedDevice = Static<typeof mostUsedDevice>;

/** The configured plan's price, and what a subscription would be charged now. */
export const price = T.Object({
  unit_amount: T.Integer({
    description: 'Per device and interval, in the smallest unit of the currency (cents).',
  }),
  currency: T.String({ description: 'ISO code, lowercase (usd, brl, ...).' }),
  interval: T.Union([T.Literal('day'), T.Literal('week'), T.Literal('month'), T.Literal('year')]),
  interval_count: T.Integer({
    description: 'Intervals between charges (1: every month, for a monthly price).',
  }),
  devices: T.Integer({ description: 'The accepted devices a subscription made now is charged for.' }),
  amount: T.Integer({ description: '`unit_amount` times `devices`, per interval.' }),
});
export type PriceView = Static<typeof price>;

/** A Checkout session where the owner enters a card on Stripe's page. */
export const checkoutSession = T.Object({
  id: T.String({ description: 'cs_...' }),
  url: T.String({
    format: 'uri',
    description: "Stripe's page where the card is entered; it returns to Billing.",
  }),
});
