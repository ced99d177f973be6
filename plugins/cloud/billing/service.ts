import {
  BadRequest,
  type Config,
  FailedDependency,
  HttpError,
  type Logger,
  type NamespaceBilling,
  NotFound,
  PaymentRequired,
  TenantStore,
} from '@gatehouse/core';
import { acceptable, Device, Namespace, User, usage } from '@gatehouse/plugin-community';
import type { Knex } from 'knex';
import type Stripe from 'stripe';
import {
  BillingCheckoutSession,
  BillingCustomer,
  BillingDeviceChoice,
  BillingInvoice,
  BillingSubscription,
  BillingWebhookEvent,
} from './model';
import type { BillingProvider } from './provider';
import {
  type CustomerView,
  type InvoiceStatus,
  type InvoiceView,
  invoiceStatuses,
  type MostUsedDevice,
  type PriceView,
  type SubscriptionStatus,
  type SubscriptionView,
  subscriptionStatuses,
} from './schemas';

/**
 * Stripe statuses under which the namespace is served as subscribed. `past_due` is included: Stripe is still
 * retrying the renewal payment, and devices are not cut off while it does; `unpaid` (retries exhausted) is not.
 */
const SERVING = new Set(['active', 'trialing', 'past_due']);

/** The intervals of a recurring price. */
const INTERVALS = ['day', 'week', 'month', 'year'] as const;

/**
 * Billing of the cloud edition: a namespace's customer and cards at the payment provider, its
 * subscription and invoices (as the provider last reported them, through the calls here and its webhooks), and the
 * rules that depend on them: beyond the free device limit, accepting needs an active subscription (402), and a
 * namespace whose subscription lapsed keeps only its chosen devices reachable.
 */
export class BillingService {
  private readonly db: Knex;
  private readonly config: Config;
  private readonly provider: BillingProvider;
  private readonly log: Logger;

  constructor(deps: { db: Knex; config: Config; billingProvider: BillingProvider; log: Logger }) {
    this.db = deps.db;
    this.config = deps.config;
    this.provider = deps.billingProvider;
    this.log = deps.log.child({ part: 'billing' });
  }

  /** Tenant data of `tenantId`, through its models (in `trx` when given). */
  private store(tenantId: string, trx?: Knex.Transaction): TenantStore {
    return new TenantStore(this.db, tenantId, trx);
  }

  /** The devices a namespace has for free (the edition's default device limit; -1: no limit, no billing gate). */
  get freeDevices(): number {
    return this.config.limits.maxDevices;
  }

  // --- customer and cards ---------------------------------------------------------------------------------------

  /** `GET /api/billing/customer`: 404 until the namespace has a customer. */
  async customer(tenantId: string): Promise<CustomerView> {
    const id = await this.customerId(tenantId);
    if (!id) throw new NotFound('customer');
    return this.customerView(id);
  }

  /** `POST /api/billing/customer`: the namespace's customer at the provider, made once (for the owner's address). */
  async createCustomer(tenantId: string): Promise<CustomerView> {
    const existing = await this.customerId(tenantId);
    if (existing) return this.customerView(existing);
    const ns = await Namespace.bindKnex(this.db).query().findById(tenantId).select('name', 'owner');
    if (!ns) throw new NotFound('namespace');
    const person = await User.bindKnex(this.db).query().findById(ns.owner).select('name', 'email');
    if (!person) throw new NotFound('namespace');
    const owner = { namespace: ns.name, name: person.name, email: person.email };
    const customer = await this.provider.call('customer', (stripe) =>
      stripe.customers.create(
        {
          name: owner.name,
          email: owner.email,
          description: `Gatehouse namespace ${owner.namespace}`,
          metadata: { tenant_id: tenantId },
        },
        // Two calls at once (a double click) make one customer.
        { idempotencyKey: `gatehouse-customer-${tenantId}` },
      ),
    );
    await this.store(tenantId)
      .query(BillingCustomer)
      .insert({ customer_id: customer.id })
      .onConflict('tenant_id')
      .ignore();
    const id = (await this.customerId(tenantId)) ?? customer.id;
    return this.customerView(id);
  }

  /** `POST /api/billing/paymentmethod/attach`: a card (made by Stripe.js or Checkout) becomes one of the customer's. */
  async attachPaymentMethod(tenantId: string, paymentMethod: string): Promise<CustomerView> {
    const customerId = (await this.customerId(tenantId)) ?? (await this.createCustomer(tenantId)).id;
    const attached = await this.provider.call('payment method', (stripe) =>
      stripe.paymentMethods.attach(paymentMethod, { customer: customerId }),
    );
    await this.defaultIfFirst(customerId, attached.id);
    return this.customerView(customerId);
  }

  /** The first card is the one subscriptions charge. */
  private async defaultIfFirst(customerId: string, paymentMethod: string): Promise<void> {
    const customer = await this.provider.call('customer', (stripe) => stripe.customers.retrieve(customerId));
    if (!('deleted' in customer && customer.deleted) && !defaultMethod(customer as Stripe.Customer)) {
      await this.setDefaultAt(customerId, paymentMethod);
    }
  }

  /**
   * `POST /api/billing/checkout`: a Stripe Checkout session in setup mode, where the owner enters a card on Stripe's
   * own page. Its return addresses are this server's Billing page (never one from the request), the success one
   * carrying the session id for `completeCheckout`.
   */
  async startCheckout(tenantId: string): Promise<{ id: string; url: string }> {
    // Checkout's dynamic payment methods offer those of the currency a subscription is charged in.
    const { currency } = await this.planPrice();
    const customerId = (await this.customerId(tenantId)) ?? (await this.createCustomer(tenantId)).id;
    const billing = `${this.config.publicUrl.replace(/\/+$/, '')}/billing`;
    const session = await this.provider.call('checkout session', (stripe) =>
      stripe.checkout.sessions.create({
        mode: 'setup',
        customer: customerId,
        currency,
        client_reference_id: tenantId,
        metadata: { tenant_id: tenantId },
        // Stripe puts the session's id in place of the template.
        success_url: `${billing}?checkout_session={CHECKOUT_SESSION_ID}`,
        cancel_url: `${billing}?checkout=canceled`,
      }),
    );
    if (!session.url) {
      throw new FailedDependency(
        'the payment provider did not answer; try again in a moment',
        'provider_unavailable',
      );
    }
    await this.store(tenantId).query(BillingCheckoutSession).insert({ session_id: session.id });
    return { id: session.id, url: session.url };
  }

  /**
   * `POST /api/billing/checkout/complete`: the card saved in a Checkout session of this namespace becomes one of its
   * customer's (the first card the default). The session must be one this namespace opened (404 otherwise, so
   * another namespace's id tells nothing), belong to its customer, be complete, and not be completed already (409).
   */
  async completeCheckout(tenantId: string, sessionId: string): Promise<CustomerView> {
    const store = this.store(tenantId);
    const row = await store.query(BillingCheckoutSession).findById(sessionId);
    if (!row) throw new NotFound('checkout session');
    if (row.completed_at) {
      throw new HttpError(409, 'this card entry was already completed', {
        code: 'checkout_already_completed',
      });
    }
    const customerId = await this.customerId(tenantId);
    if (!customerId) throw new NotFound('checkout session');
    const session = await this.provider.call('checkout session', (stripe) =>
      stripe.checkout.sessions.retrieve(sessionId, { expand: ['setup_intent'] }),
    );
    const owner = typeof session.customer === 'string' ? session.customer : session.customer?.id;
    if (owner !== customerId || session.mode !== 'setup') throw new NotFound('checkout session');
    const intent = session.setup_intent;
    const paymentMethod =
      intent && typeof intent !== 'string' && intent.status === 'succeeded'
        ? typeof intent.payment_method === 'string'
          ? intent.payment_method
          : intent.payment_method?.id
        : undefined;
    if (session.status !== 'complete' || !paymentMethod) {
      throw new HttpError(409, 'the card entry is not complete; enter the card again', {
        code: 'checkout_not_complete',
      });
    }
    // Only one completion of a session counts: a second one at the same moment finds it taken.
    const claimed = await store
      .query(BillingCheckoutSession)
      .findById(sessionId)
      .whereNull('completed_at')
      .patch({ completed_at: new Date() });
    if (!claimed)
      throw new HttpError(409, 'this card entry was already completed', {
        code: 'checkout_already_completed',
      });
    try {
      // Checkout attaches the card to the session's customer; one it did not attach is attached here.
      const pm = await this.provider.call('payment method', (stripe) =>
        stripe.paymentMethods.retrieve(paymentMethod),
      );
      const holder = typeof pm.customer === 'string' ? pm.customer : pm.customer?.id;
      if (!holder) {
        await this.provider.call('payment method', (stripe) =>
          stripe.paymentMethods.attach(paymentMethod, { customer: customerId }),
        );
      } else if (holder !== customerId) {
        throw new NotFound('checkout session');
      }
      await this.defaultIfFirst(customerId, paymentMethod);
    } catch (err) {
      // The provider did not finish: the session may be completed again.
      await store.query(BillingCheckoutSession).findById(sessionId).patch({ completed_at: null });
      throw err;
    }
    return this.customerView(customerId);
  }

  /**
   * `GET /api/billing/price`: the configured plan's price per device and interval, with the accepted devices a
   * subscription would be charged for now.
   */
  async price(tenantId: string): Promise<PriceView> {
    const price = await this.planPrice();
    const devices = await this.acceptedDevices(tenantId);
    return {
      unit_amount: price.unit_amount,
      currency: price.currency,
      interval: price.interval,
      interval_count: price.interval_count,
      devices,
      amount: price.unit_amount * devices,
    };
  }

  /** The configured plan as Stripe prices it; 424 unless it is a recurring price per unit (a device). */
  private async planPrice(): Promise<Omit<PriceView, 'devices' | 'amount'>> {
    const plan = this.provider.plan();
    const price = await this.provider
      .call('price', (stripe) => stripe.prices.retrieve(plan))
      .catch((err: unknown) => {
        // A plan Stripe does not know is this server's configuration, not something the caller asked for.
        if (err instanceof NotFound) {
          throw new FailedDependency(
            'the plan configured on this server does not exist at Stripe',
            'billing_not_configured',
          );
        }
        throw err;
      });
    const interval = INTERVALS.find((i) => i === price.recurring?.interval);
    if (price.unit_amount === null || price.billing_scheme !== 'per_unit' || !price.recurring || !interval) {
      throw new FailedDependency(
        'the plan configured on this server is not a recurring price per device',
        'billing_not_configured',
      );
    }
    return {
      unit_amount: price.unit_amount,
      currency: price.currency,
      interval,
      interval_count: price.recurring.interval_count,
    };
  }

  /** `POST /api/billing/paymentmethod/detach`. The card subscriptions charge stays while the subscription runs. */
  async detachPaymentMethod(tenantId: string, paymentMethod: string): Promise<CustomerView> {
    const customerId = await this.ownCard(tenantId, paymentMethod);
    const view = await this.customerView(customerId);
    const card = view.payment_methods.find((m) => m.id === paymentMethod);
    const sub = await this.subscriptionRow(tenantId);
    if (card?.default && sub && SERVING.has(sub.status)) {
      const other = view.payment_methods.find((m) => m.id !== paymentMethod);
      if (!other) {
        throw new HttpError(
          400,
          'this card pays the running subscription; add another card before removing it',
          { code: 'card_in_use' },
        );
      }
      await this.setDefaultAt(customerId, other.id);
    }
    await this.provider.call('payment method', (stripe) => stripe.paymentMethods.detach(paymentMethod));
    return this.customerView(customerId);
  }

  /** `POST /api/billing/paymentmethod/default`: the card invoices are charged to. */
  async setDefaultPaymentMethod(tenantId: string, paymentMethod: string): Promise<CustomerView> {
    const customerId = await this.ownCard(tenantId, paymentMethod);
    await this.setDefaultAt(customerId, paymentMethod);
    return this.customerView(customerId);
  }

  // --- subscription ---------------------------------------------------------------------------------------------

  /** `GET /api/billing/subscription`: what the provider last reported; `inactive` without one. */
  async subscription(tenantId: string): Promise<SubscriptionView> {
    const row = await this.subscriptionRow(tenantId);
    const invoices = await this.store(tenantId)
      .query(BillingInvoice)
      .orderBy('created_at', 'desc')
      .limit(24)
      .select('id', 'status', 'currency', 'amount');
    const list: InvoiceView[] = invoices.map((i) => ({
      id: i.id,
      status: i.status,
      currency: i.currency,
      amount: Number(i.amount),
    }));
    if (!row) return { id: '', active: false, status: 'inactive', end_at: 0, invoices: list };
    return {
      id: row.subscription_id,
      active: SERVING.has(row.status),
      status: viewStatus(row),
      end_at: row.end_at ? Math.floor(new Date(row.end_at).getTime() / 1000) : 0,
      invoices: list,
    };
  }

  /**
   * `POST /api/billing/subscription`: subscribes the namespace to the configured plan, charged to its default card,
   * with one unit per accepted device. A namespace already subscribed gets its subscription back unchanged.
   */
  async subscribe(tenantId: string): Promise<SubscriptionView> {
    const current = await this.subscriptionRow(tenantId);
    if (current && SERVING.has(current.status)) return this.subscription(tenantId);
    const customerId = await this.customerId(tenantId);
    if (!customerId) throw new PaymentRequired('add a card before subscribing', 'payment_method_required');
    const customer = await this.provider.call('customer', (stripe) => stripe.customers.retrieve(customerId));
    const card =
      'deleted' in customer && customer.deleted ? null : defaultMethod(customer as Stripe.Customer);
    if (!card) throw new PaymentRequired('add a card before subscribing', 'payment_method_required');
    const plan = this.provider.plan();
    const devices = await this.acceptedDevices(tenantId);
    const sub = await this.provider.call('subscription', (stripe) =>
      stripe.subscriptions.create(
        {
          customer: customerId,
          items: [{ plan, quantity: devices }],
          default_payment_method: card,
          metadata: { tenant_id: tenantId },
        },
        // A retry (or a double click) makes one subscription; a new one after the last ended gets a new key.
        {
          idempotencyKey: `gatehouse-subscription-${tenantId}-${current?.subscription_id ?? 'first'}-${devices}`,
        },
      ),
    );
    await this.saveSubscription(tenantId, sub, providerNow(), devices);
    await this.fetchInvoices(tenantId, sub.id);
    return this.subscription(tenantId);
  }

  // --- usage ----------------------------------------------------------------------------------------------------

  /**
   * Reports the namespace's accepted devices to the provider as the subscription's quantity, when it differs from
   * what was last reported. Without a running subscription there is nothing to report.
   */
  async reportUsage(tenantId: string): Promise<{ reported: boolean; devices: number }> {
    const row = await this.subscriptionRow(tenantId);
    const devices = await this.acceptedDevices(tenantId);
    if (!row?.item_id || !SERVING.has(row.status)) return { reported: false, devices };
    if (row.reported_devices === devices) return { reported: false, devices };
    const item = row.item_id;
    await this.provider.call('subscription', (stripe) =>
      stripe.subscriptionItems.update(item, { quantity: devices, proration_behavior: 'create_prorations' }),
    );
    await this.store(tenantId).query(BillingSubscription).patch({ reported_devices: devices });
    return { reported: true, devices };
  }

  /** After an acceptance: the usage report may fail (the device stays accepted); the next report catches up. */
  async afterAccept(tenantId: string): Promise<void> {
    try {
      await this.reportUsage(tenantId);
    } catch (err) {
      this.log.warn({ tenantId, err: (err as Error).message }, 'usage report failed; it is sent again later');
    }
  }

  /**
   * Before a namespace is deleted (and for `report?action=namespace_delete`): its running subscription ends now at
   * the provider. A provider that does not answer stops the deletion with 424, so nothing is billed for a namespace
   * that no longer exists.
   */
  async endForDeletion(tenantId: string, trx?: Knex.Transaction): Promise<void> {
    const store = this.store(tenantId, trx);
    const row = await store.query(BillingSubscription).first();
    if (!row || ['canceled', 'incomplete_expired'].includes(row.status)) return;
    const sub = await this.provider.call('subscription', (stripe) =>
      stripe.subscriptions.cancel(row.subscription_id, { invoice_now: true, prorate: true }),
    );
    await store
      .query(BillingSubscription)
      .patch({ status: sub.status, cancel_at_period_end: false, state_at: providerNow() });
  }

  /**
   * Before an account is deleted (`DELETE /api/user`): the running subscription of every namespace it alone owns
   * ends at the provider, all of them before any namespace goes, so a provider that does not answer keeps the account
   * (424) with every namespace. The namespaces' own `namespace.beforeDelete` then finds nothing left to end.
   */
  async settleAccount(tenantIds: string[], trx: Knex.Transaction): Promise<void> {
    for (const tenantId of tenantIds) await this.endForDeletion(tenantId, trx);
  }

  // --- the rules ------------------------------------------------------------------------------------------------

  /** The `device.beforeAccept` rule: beyond the free devices, an active subscription or 402. */
  async checkAccept(tenantId: string, uid: string): Promise<void> {
    if (await this.canAcceptDevice(tenantId, uid)) return;
    throw new PaymentRequired(
      `this namespace has the ${this.freeDevices} devices it may use for free; accepting more needs an active ` +
        'subscription (Billing, in the console)',
      'subscription_required',
    );
  }

  /** The `device.beforeConnect` rule: a lapsed namespace beyond the free devices reaches only the chosen ones. */
  async checkConnect(tenantId: string, uid: string): Promise<void> {
    const reach = await this.reachable(tenantId);
    if (reach.all || reach.kept.has(uid)) return;
    throw new PaymentRequired(
      `the subscription of this namespace has ended: only the ${this.freeDevices} devices chosen under Billing ` +
        'stay reachable; subscribe again to reach this one',
      'subscription_required',
    );
  }

  /** `POST /api/billing/evaluate`. */
  async evaluate(tenantId: string): Promise<{ can_accept: boolean; can_connect: boolean }> {
    const [canAccept, reach] = await Promise.all([this.canAcceptDevice(tenantId), this.reachable(tenantId)]);
    return { can_accept: canAccept, can_connect: reach.all };
  }

  /** `POST /api/billing/device-choice`: the accepted devices (at most the free number) kept when the plan lapses. */
  async chooseDevices(tenantId: string, choices: string[]): Promise<{ choices: string[] }> {
    if (new Set(choices).size !== choices.length)
      throw new BadRequest('a device is chosen twice', ['choices']);
    const max = this.freeDevices;
    if (max >= 0 && choices.length > max) throw new BadRequest(`at most ${max} devices`, ['choices']);
    const found = await this.store(tenantId)
      .query(Device)
      .whereIn('uid', choices)
      .where('status', 'accepted')
      .select('uid');
    if (found.length !== choices.length) {
      throw new BadRequest('every choice must be an accepted device of this namespace', ['choices']);
    }
    await this.store(tenantId).transaction(async (store) => {
      await store.query(BillingDeviceChoice).delete();
      for (const uid of choices) await store.query(BillingDeviceChoice).insert({ device_uid: uid });
    });
    return { choices };
  }

  /**
   * `GET /api/billing/devices-most-used`: the accepted devices with the most signed-in sessions, as many as are
   * free. Only sessions that signed in count: a refused attempt is a session row too, and anyone who knows a
   * device's address can make one, so counting those would let an outsider choose which devices stay reachable.
   */
  async mostUsed(tenantId: string): Promise<MostUsedDevice[]> {
    const rows = (await this.store(tenantId)
      .query(Device)
      .castTo<{ uid: string; name: string; last_seen: Date; sessions: number }[]>()
      .where('devices.status', 'accepted')
      .select(
        'devices.uid',
        'devices.name',
        'devices.last_seen',
        this.db.raw(
          '(select count(*) from sessions s where s.tenant_id = devices.tenant_id and s.device_uid = devices.uid and s.authenticated)::int as sessions',
        ),
      )
      .orderBy([
        { column: 'sessions', order: 'desc' },
        { column: 'devices.last_seen', order: 'desc' },
        { column: 'devices.uid', order: 'asc' },
      ])
      .limit(Math.max(this.freeDevices, 0) || 3)) as {
      uid: string;
      name: string;
      last_seen: Date;
      sessions: number;
    }[];
    return rows.map((r) => ({
      uid: r.uid,
      name: r.name,
      sessions: Number(r.sessions),
      last_seen: new Date(r.last_seen).toISOString(),
    }));
  }

  // --- provider events ------------------------------------------------------------------------------------------

  /**
   * Applies a verified webhook event once: subscription events update the namespace's subscription (and its device
   * limit), invoice events its invoices. Events of customers that are not ours, and other types, change nothing.
   */
  async applyEvent(event: Stripe.Event): Promise<{ applied: boolean }> {
    // Stripe delivers an event again when an answer is late or lost: each is applied once. The event is claimed in
    // the transaction that applies it, so a failure leaves it unclaimed for Stripe's next delivery (which then
    // applies it), and a copy arriving meanwhile waits on the claim and finds it taken.
    return this.db.transaction(async (trx) => {
      // The table's own query: objection answers an ignored insert with the model it was given, as if inserted.
      const claimed = await trx(BillingWebhookEvent.tableName)
        .insert({ id: event.id, type: event.type })
        .onConflict('id')
        .ignore()
        .returning('id');
      if (!claimed.length) return { applied: false };
      return this.applyClaimed(event, trx);
    });
  }

  private async applyClaimed(event: Stripe.Event, trx: Knex.Transaction): Promise<{ applied: boolean }> {
    const at = new Date(event.created * 1000);
    switch (event.type) {
      case 'customer.subscription.created':
      case 'customer.subscription.updated':
      case 'customer.subscription.deleted':
      case 'customer.subscription.paused':
      case 'customer.subscription.resumed': {
        const sub = event.data.object;
        const tenantId = await this.tenantOfCustomer(sub.customer, trx);
        if (!tenantId) return { applied: false };
        const row = await this.subscriptionRow(tenantId, trx);
        // An event about an older subscription of the namespace (ended and replaced) does not overwrite the new one.
        if (row && row.subscription_id !== sub.id && SERVING.has(row.status)) return { applied: false };
        if (row && row.subscription_id === sub.id && new Date(row.state_at) > at) return { applied: false };
        await this.saveSubscription(tenantId, sub, at, undefined, trx);
        return { applied: true };
      }
      case 'invoice.created':
      case 'invoice.finalized':
      case 'invoice.updated':
      case 'invoice.paid':
      case 'invoice.payment_succeeded':
      case 'invoice.payment_failed':
      case 'invoice.voided':
      case 'invoice.marked_uncollectible': {
        const invoice = event.data.object;
        const tenantId = await this.tenantOfCustomer(invoice.customer, trx);
        if (!tenantId) return { applied: false };
        await this.saveInvoice(tenantId, invoice, at, trx);
        return { applied: true };
      }
      default:
        return { applied: false };
    }
  }

  // --- internals ------------------------------------------------------------------------------------------------

  private async canAcceptDevice(tenantId: string, uid?: string): Promise<boolean> {
    const free = this.freeDevices;
    if (free < 0) return true;
    const row = await this.subscriptionRow(tenantId);
    if (row && SERVING.has(row.status)) return true;
    const store = this.store(tenantId);
    const used = await usage(store);
    if (!uid) return used < free;
    const device = await store.query(Device).findById(uid).select('status', 'removed_at');
    // A device that does not exist is the devices feature's 404 to give.
    if (!device) return true;
    return acceptable(device, { max: free, used });
  }

  /** Which accepted devices the gateway lets through: all, or (lapsed, beyond the free devices) the kept ones. */
  private async reachable(tenantId: string): Promise<{ all: boolean; kept: Set<string> }> {
    const free = this.freeDevices;
    if (free < 0) return { all: true, kept: new Set() };
    const row = await this.subscriptionRow(tenantId);
    if (row && SERVING.has(row.status)) return { all: true, kept: new Set() };
    const accepted = await this.acceptedDevices(tenantId);
    if (accepted <= free) return { all: true, kept: new Set() };
    const store = this.store(tenantId);
    const choices = await store.query(BillingDeviceChoice).select('device_uid');
    const chosen = choices.length
      ? await store
          .query(Device)
          .whereIn(
            'uid',
            choices.map((c) => c.device_uid),
          )
          .where('status', 'accepted')
          .select('uid')
      : [];
    // Until the owner chooses, the most used devices are the ones kept.
    const kept =
      chosen.length > 0 ? chosen.map((c) => c.uid) : (await this.mostUsed(tenantId)).map((d) => d.uid);
    return { all: false, kept: new Set(kept.slice(0, free)) };
  }

  private async acceptedDevices(tenantId: string): Promise<number> {
    return this.store(tenantId).query(Device).where('status', 'accepted').resultSize();
  }

  /**
   * The Namespace entity's `billing`: the customer and, when there is one, the subscription as last reported. No
   * call to the provider: a namespace list must not wait on it.
   */
  async namespaceBilling(tenantId: string): Promise<NamespaceBilling | null> {
    const store = this.store(tenantId);
    const [customer, subscription] = await Promise.all([
      store.query(BillingCustomer).first().select('customer_id', 'created_at'),
      store.query(BillingSubscription).first().select('subscription_id', 'status', 'end_at', 'state_at'),
    ]);
    if (!customer) return null;
    return {
      customer_id: customer.customer_id,
      ...(subscription
        ? {
            subscription: {
              id: subscription.subscription_id,
              status: subscription.status,
              current_period_end: subscription.end_at
                ? Math.floor(new Date(subscription.end_at).getTime() / 1000)
                : 0,
            },
            updated_at: new Date(subscription.state_at).toISOString(),
          }
        : {}),
      created_at: new Date(customer.created_at).toISOString(),
    };
  }

  private async customerId(tenantId: string): Promise<string | undefined> {
    const row = await this.store(tenantId).query(BillingCustomer).first().select('customer_id');
    return row?.customer_id;
  }

  private async tenantOfCustomer(
    customer: string | Stripe.Customer | Stripe.DeletedCustomer | null,
    trx?: Knex.Transaction,
  ): Promise<string | undefined> {
    const id = typeof customer === 'string' ? customer : customer?.id;
    if (!id) return undefined;
    // A webhook names the customer, not the namespace: Stripe's customer ids are unique across the installation.
    const row = await BillingCustomer.acrossTenants(this.db, trx)
      .where({ customer_id: id })
      .first()
      .select('tenant_id');
    if (!row) this.log.info({ customer: id }, 'billing event of a customer that is not ours; ignored');
    return row?.tenant_id;
  }

  private async subscriptionRow(
    tenantId: string,
    trx?: Knex.Transaction,
  ): Promise<BillingSubscription | undefined> {
    return this.store(tenantId, trx).query(BillingSubscription).first();
  }

  /** 404 unless the card is one of the namespace's customer's; returns that customer. */
  private async ownCard(tenantId: string, paymentMethod: string): Promise<string> {
    const customerId = await this.customerId(tenantId);
    if (!customerId) throw new NotFound('payment method');
    const pm = await this.provider.call('payment method', (stripe) =>
      stripe.paymentMethods.retrieve(paymentMethod),
    );
    const owner = typeof pm.customer === 'string' ? pm.customer : pm.customer?.id;
    if (owner !== customerId) throw new NotFound('payment method');
    return customerId;
  }

  private async setDefaultAt(customerId: string, paymentMethod: string): Promise<void> {
    await this.provider.call('customer', (stripe) =>
      stripe.customers.update(customerId, { invoice_settings: { default_payment_method: paymentMethod } }),
    );
  }

  private async customerView(customerId: string): Promise<CustomerView> {
    const [customer, methods] = await Promise.all([
      this.provider.call('customer', (stripe) => stripe.customers.retrieve(customerId)),
      this.provider.call('customer', (stripe) =>
        stripe.customers.listPaymentMethods(customerId, { type: 'card', limit: 100 }),
      ),
    ]);
    if ('deleted' in customer && customer.deleted) throw new NotFound('customer');
    const live = customer as Stripe.Customer;
    const preferred = defaultMethod(live);
    return {
      id: live.id,
      name: live.name ?? '',
      email: live.email ?? '',
      payment_methods: methods.data
        .filter((m) => m.card)
        .map((m) => {
          const card = m.card as Stripe.PaymentMethod.Card;
          return {
            id: m.id,
            number: `**** **** **** ${card.last4}`,
            brand: card.brand,
            exp_month: card.exp_month,
            exp_year: card.exp_year,
            cvc: card.checks?.cvc_check ?? 'unchecked',
            default: m.id === preferred,
          };
        }),
    };
  }

  private async saveSubscription(
    tenantId: string,
    sub: Stripe.Subscription,
    at: Date,
    reported?: number,
    trx?: Knex.Transaction,
  ) {
    const item = sub.items?.data?.[0];
    const end = periodEnd(sub);
    const row = {
      subscription_id: sub.id,
      item_id: item?.id ?? null,
      status: sub.status,
      cancel_at_period_end: sub.cancel_at_period_end === true,
      end_at: end ? new Date(end * 1000) : null,
      state_at: at,
      ...(reported === undefined ? {} : { reported_devices: reported }),
    };
    const store = this.store(tenantId, trx);
    if (await store.query(BillingSubscription).first()) await store.query(BillingSubscription).patch(row);
    else await store.query(BillingSubscription).insert(row).onConflict('tenant_id').merge();
    await this.applyLimit(tenantId, SERVING.has(sub.status), trx);
  }

  /** A subscribed namespace has no device limit; otherwise it has the free devices. */
  private async applyLimit(tenantId: string, serving: boolean, trx?: Knex.Transaction): Promise<void> {
    await Namespace.bindKnex(this.db)
      .query(trx)
      .findById(tenantId)
      .patch({ max_devices: serving ? -1 : this.freeDevices });
  }

  private async saveInvoice(
    tenantId: string,
    invoice: Stripe.Invoice,
    at: Date,
    trx?: Knex.Transaction,
  ): Promise<void> {
    if (!invoice.id) return;
    const status = invoiceStatus(invoice.status);
    if (!status) return;
    const subscription = invoice.parent?.subscription_details?.subscription;
    const store = this.store(tenantId, trx);
    const state = { status, currency: invoice.currency, amount: invoice.amount_due, state_at: at };
    const held = await store.query(BillingInvoice).findById(invoice.id).select('state_at');
    if (held) {
      // The provider may deliver events out of order: an older state never replaces a newer one.
      if (new Date(held.state_at) > at) return;
      await store.query(BillingInvoice).findById(invoice.id).patch(state);
      return;
    }
    await store
      .query(BillingInvoice)
      .insert({
        id: invoice.id,
        subscription_id: typeof subscription === 'string' ? subscription : (subscription?.id ?? null),
        created_at: new Date(invoice.created * 1000),
        ...state,
      })
      .onConflict('id')
      .ignore();
  }

  /** The subscription's invoices so far, right after it is made (later ones arrive by webhook). */
  private async fetchInvoices(tenantId: string, subscription: string): Promise<void> {
    try {
      const list = await this.provider.call('invoice', (stripe) =>
        stripe.invoices.list({ subscription, limit: 24 }),
      );
      for (const invoice of list.data) await this.saveInvoice(tenantId, invoice, providerNow());
    } catch (err) {
      // The subscription stands; its invoices come with the provider's events.
      this.log.warn(
        { tenantId, err: (err as Error).message },
        'could not list the invoices of a new subscription',
      );
    }
  }
}

function defaultMethod(customer: Stripe.Customer): string | null {
  const pm = customer.invoice_settings?.default_payment_method;
  if (!pm) return null;
  return typeof pm === 'string' ? pm : pm.id;
}

/**
 * Stripe moved the period end from the subscription to its items (API 2025-03-31); a server answering an older
 * API version (such as a Stripe-compatible test server) still has it on the subscription.
 */
function periodEnd(sub: Stripe.Subscription): number | undefined {
  const item = sub.items?.data?.[0] as
    | (Stripe.SubscriptionItem & { current_period_end?: number })
    | undefined;
  return (
    item?.current_period_end ??
    (sub as Stripe.Subscription & { current_period_end?: number }).current_period_end
  );
}

function viewStatus(row: BillingSubscription): SubscriptionStatus {
  if (row.cancel_at_period_end && SERVING.has(row.status)) return 'to_cancel_at_end_of_period';
  return (subscriptionStatuses as readonly string[]).includes(row.status)
    ? (row.status as SubscriptionStatus)
    : 'inactive';
}

function invoiceStatus(status: Stripe.Invoice.Status | null): InvoiceStatus | undefined {
  if (status === 'void') return 'voided';
  return (invoiceStatuses as readonly string[]).includes(status ?? '')
    ? (status as InvoiceStatus)
    : undefined;
}

/**
 * Now, at the precision of the provider's clock (whole seconds, as Stripe's `created`): what an API answer tells is
 * as new as the events of the same second, which then apply in the order they arrive.
 */
function providerNow(): Date {
  return new Date(Math.floor(Date.now() / 1000) * 1000);
}
