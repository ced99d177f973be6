import { BadRequest, defineRoute } from '@gatehouse/core';
import { Type as T } from '@sinclair/typebox';
import type { BillingProvider } from './provider';
import { checkoutSession, customer, mostUsedDevice, price, subscription } from './schemas';

const refusal = T.Object({ message: T.String(), code: T.Optional(T.String()) });
/** Every billing call: 424 `billing_not_configured` on a server without Stripe, `provider_unavailable` when it is down. */
const unavailable = { 424: refusal };
const notFound = { 404: refusal };
const failures = { 402: refusal, ...unavailable };

/**
 * The first step of every billing call: a server without Stripe answers 424 `billing_not_configured` on each of
 * them, whether or not the call would reach Stripe.
 */
function billingOn(services: { billingProvider: BillingProvider }): void {
  services.billingProvider.assertConfigured();
}

const paymentMethodBody = T.Object(
  { id: T.String({ minLength: 1, maxLength: 255, pattern: '^[A-Za-z0-9_]+$', description: 'e.g. pm_...' }) },
  { additionalProperties: false },
);

/** Billing of the cloud edition (`/api/billing/*`), plus the provider's webhook endpoint. */
export const billingRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/billing/customer',
    auth: ['user'],
    role: 'owner',
    summary: "The namespace's billing customer and its cards",
    tags: ['billing'],
    schema: { response: { 200: customer, ...notFound, ...unavailable } },
    async handler({ services, tenantId }) {
      billingOn(services);
      return services.billing.customer(tenantId());
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/billing/customer',
    auth: ['user'],
    role: 'owner',
    summary:
      "Create the namespace's billing customer (the owner's name and e-mail); answers the existing one",
    tags: ['billing'],
    schema: { response: { 200: customer, ...unavailable } },
    async handler({ services, tenantId }) {
      billingOn(services);
      return services.billing.createCustomer(tenantId());
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/billing/subscription',
    auth: ['user', 'apiKey'],
    role: 'observer',
    summary: "The namespace's subscription and its invoices",
    tags: ['billing'],
    schema: { response: { 200: subscription, ...unavailable } },
    async handler({ services, tenantId }) {
      billingOn(services);
      return services.billing.subscription(tenantId());
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/billing/subscription',
    auth: ['user'],
    role: 'owner',
    summary: 'Subscribe the namespace (charged to its default card, one unit per accepted device)',
    description:
      '402 with code `payment_method_required` until a card is attached; 404 when Stripe no longer knows the customer.',
    tags: ['billing'],
    schema: { response: { 200: subscription, ...notFound, ...failures } },
    async handler({ services, tenantId }) {
      billingOn(services);
      return services.billing.subscribe(tenantId());
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/billing/price',
    auth: ['user'],
    role: 'owner',
    summary: "The configured plan's price per device, and the accepted devices a subscription is charged for",
    tags: ['billing'],
    schema: { response: { 200: price, ...unavailable } },
    async handler({ services, tenantId }) {
      billingOn(services);
      return services.billing.price(tenantId());
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/billing/checkout',
    auth: ['user'],
    role: 'owner',
    summary: "Open Stripe's page to enter a card (a Checkout session in setup mode)",
    description:
      "Answers the page's `url`. Stripe returns to this server's Billing page, with `checkout_session` set to the " +
      'session id once the card is saved (then `POST /api/billing/checkout/complete`). The customer is created if ' +
      'there is none yet.',
    tags: ['billing'],
    schema: { response: { 200: checkoutSession, ...unavailable } },
    async handler({ services, tenantId }) {
      billingOn(services);
      return services.billing.startCheckout(tenantId());
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/billing/checkout/complete',
    auth: ['user'],
    role: 'owner',
    summary: 'Add the card saved in a Checkout session of this namespace',
    description:
      'The first card becomes the default. 404 for a session this namespace did not open; 409 with the code ' +
      '`checkout_already_completed` for one completed before, `checkout_not_complete` for one whose card was not saved.',
    tags: ['billing'],
    schema: {
      body: T.Object(
        {
          session_id: T.String({
            minLength: 4,
            maxLength: 255,
            pattern: '^cs_[A-Za-z0-9_]+$',
            description: 'The `checkout_session` Stripe returned with (cs_...).',
          }),
        },
        { additionalProperties: false },
      ),
      response: { 200: customer, ...notFound, 409: refusal, ...unavailable },
    },
    async handler({ body, services, tenantId }) {
      billingOn(services);
      return services.billing.completeCheckout(tenantId(), body.session_id);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/billing/paymentmethod/attach',
    auth: ['user'],
    role: 'owner',
    summary: "Attach a card (a payment method made with Stripe) to the namespace's customer",
    description: 'The first card attached becomes the default. The customer is created if there is none yet.',
    tags: ['billing'],
    schema: { body: paymentMethodBody, response: { 200: customer, ...notFound, ...failures } },
    async handler({ body, services, tenantId }) {
      billingOn(services);
      return services.billing.attachPaymentMethod(tenantId(), body.id);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/billing/paymentmethod/detach',
    auth: ['user'],
    role: 'owner',
    summary: 'Remove a card',
    description:
      'The card paying a running subscription is replaced as default by another card first; when there is no other ' +
      'card, 400 with the code `card_in_use`.',
    tags: ['billing'],
    schema: {
      body: paymentMethodBody,
      response: {
        200: customer,
        400: T.Union([
          T.Array(T.String(), { description: 'The invalid fields.' }),
          T.Object({ message: T.String(), code: T.Literal('card_in_use') }),
        ]),
        ...notFound,
        ...unavailable,
      },
    },
    async handler({ body, services, tenantId }) {
      billingOn(services);
      return services.billing.detachPaymentMethod(tenantId(), body.id);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/billing/paymentmethod/default',
    auth: ['user'],
    role: 'owner',
    summary: 'Make a card the one invoices are charged to',
    tags: ['billing'],
    schema: { body: paymentMethodBody, response: { 200: customer, ...notFound, ...failures } },
    async handler({ body, services, tenantId }) {
      billingOn(services);
      return services.billing.setDefaultPaymentMethod(tenantId(), body.id);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/billing/device-choice',
    auth: ['user'],
    role: 'owner',
    summary: 'Choose the devices (at most 3) that stay reachable if the subscription ends',
    tags: ['billing'],
    schema: {
      body: T.Object(
        {
          choices: T.Array(T.String({ pattern: '^[0-9a-f]{64}$', description: 'device uid' }), {
            maxItems: 3,
            description: 'Accepted devices of the namespace; an empty list forgets the choice.',
          }),
        },
        { additionalProperties: false },
      ),
      response: { 200: T.Object({ choices: T.Array(T.String()) }), ...unavailable },
    },
    async handler({ body, services, tenantId }) {
      billingOn(services);
      return services.billing.chooseDevices(tenantId(), body.choices);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/billing/devices-most-used',
    auth: ['user'],
    role: 'administrator',
    summary: 'The accepted devices with the most signed-in sessions (the ones kept if no choice is made)',
    description:
      'Ranked by sessions that signed in; refused attempts, which need no credential, do not count. Ties go to the device seen last.',
    tags: ['billing'],
    schema: {
      response: {
        200: T.Array(mostUsedDevice),
        ...unavailable,
      },
    },
    async handler({ services, tenantId }) {
      billingOn(services);
      return services.billing.mostUsed(tenantId());
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/billing/report',
    auth: ['user'],
    role: 'owner',
    summary: 'Report to the payment provider: the accepted devices, or the end of the namespace',
    description:
      '`device_accept` sends the number of accepted devices as the subscription quantity (also done after every ' +
      'acceptance); `namespace_delete` ends the subscription now (also done when the namespace is deleted).',
    tags: ['billing'],
    schema: {
      query: T.Object(
        { action: T.Union([T.Literal('device_accept'), T.Literal('namespace_delete')]) },
        { additionalProperties: false },
      ),
      response: { 200: T.Object({}), ...notFound, ...unavailable },
    },
    async handler({ query, services, tenantId }) {
      billingOn(services);
      if (query.action === 'device_accept') await services.billing.reportUsage(tenantId());
      else await services.billing.endForDeletion(tenantId());
      return {};
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/billing/evaluate',
    auth: ['user', 'apiKey'],
    role: 'observer',
    summary: 'Whether the namespace may accept another device and reach all its devices',
    tags: ['billing'],
    schema: {
      response: { 200: T.Object({ can_accept: T.Boolean(), can_connect: T.Boolean() }), ...unavailable },
    },
    async handler({ services, tenantId }) {
      billingOn(services);
      return services.billing.evaluate(tenantId());
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/billing/webhook',
    auth: ['none'],
    summary: "The payment provider's events (Stripe webhook endpoint)",
    description:
      'The raw body must carry a valid `Stripe-Signature` for the configured webhook secret (400 otherwise). ' +
      'Subscription and invoice events update the namespace; each event is applied once.',
    tags: ['billing'],
    schema: {
      requestHeaders: {
        'Stripe-Signature': { description: "Stripe's signature of the body", required: true },
      },
      response: { 200: T.Object({ received: T.Boolean() }), 400: null, ...unavailable },
    },
    async handler({ ctx, services }) {
      billingOn(services);
      const raw = (ctx.request as { rawBody?: unknown }).rawBody;
      if (typeof raw !== 'string' || raw.length === 0) throw new BadRequest('the webhook body must be JSON');
      const signature = ctx.get('stripe-signature') || undefined;
      const event = services.billingProvider.event(raw, signature);
      await services.billing.applyEvent(event);
      return { received: true };
    },
  }),
];
