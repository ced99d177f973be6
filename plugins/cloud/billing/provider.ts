import { BadRequest, FailedDependency, type Logger, NotFound, PaymentRequired } from '@gatehouse/core';
import Stripe from 'stripe';
import type { BillingConfig } from './config';

/** What a provider call is about, for the answers that name it ("payment method not found"). */
export type ProviderSubject =
  | 'customer'
  | 'payment method'
  | 'subscription'
  | 'invoice'
  | 'checkout session'
  | 'price';

/**
 * The payment provider (Stripe, through its official SDK). Every call goes through `call`, which turns what Stripe
 * answers into the error taxonomy: a declined card is 402, an id Stripe does not know is 404, a request Stripe
 * refuses is 400, and anything that means the provider is away or unwell (network, 5xx, authentication, rate limit)
 * is 424, never 500. The secret key never leaves this class and is never logged.
 */
export class BillingProvider {
  private readonly settings: BillingConfig;
  private readonly log: Logger;
  private client: Stripe | undefined;

  constructor(deps: { billingConfig: BillingConfig; log: Logger }) {
    this.settings = deps.billingConfig;
    this.log = deps.log.child({ part: 'billing' });
  }

  /** Whether a secret key is configured (without one every provider call answers 424). */
  get configured(): boolean {
    return Boolean(this.settings.stripeSecretKey);
  }

  /**
   * 424 `billing_not_configured` unless a secret key is configured: every billing call starts with it, so a server
   * without Stripe answers the same way on each of them.
   */
  assertConfigured(): void {
    if (!this.configured) {
      throw new FailedDependency('billing is not set up on this server', 'billing_not_configured');
    }
  }

  /** The plan a subscription is made of; 424 when the server has none configured. */
  plan(): string {
    if (!this.settings.stripePlan) {
      throw new FailedDependency('billing has no plan configured on this server', 'billing_not_configured');
    }
    return this.settings.stripePlan;
  }

  /**
   * Verifies a webhook delivery with the SDK's own check (HMAC of the raw body, timestamp tolerance) and returns
   * the event; a delivery that does not verify is 400.
   */
  event(rawBody: string, signature: string | undefined): Stripe.Event {
    const secret = this.settings.stripeWebhookSecret;
    if (!secret) {
      throw new FailedDependency('billing is not set up on this server', 'billing_not_configured');
    }
    if (!signature) throw new BadRequest('the Stripe-Signature header is missing');
    try {
      return Stripe.webhooks.constructEvent(rawBody, signature, secret);
    } catch (err) {
      this.log.warn({ reason: (err as Error).message }, 'billing webhook refused: signature does not verify');
      throw new BadRequest('the webhook signature does not verify');
    }
  }

  /** Runs one provider call, translating its failures (see the class comment). */
  async call<T>(subject: ProviderSubject, fn: (stripe: Stripe) => Promise<T>): Promise<T> {
    const stripe = this.stripe();
    try {
      return await fn(stripe);
    } catch (err) {
      throw this.translate(err, subject);
    }
  }

  private stripe(): Stripe {
    if (this.client) return this.client;
    this.assertConfigured();
    const key = this.settings.stripeSecretKey as string;
    const base = this.settings.stripeApiBase ? new URL(this.settings.stripeApiBase) : undefined;
    this.client = new Stripe(key, {
      ...(base
        ? {
            host: base.hostname,
            protocol: base.protocol === 'http:' ? ('http' as const) : ('https' as const),
            port: base.port || (base.protocol === 'https:' ? 443 : 80),
          }
        : {}),
      // One retry of what Stripe marks as safe to retry (the SDK sends idempotency keys); then 424.
      maxNetworkRetries: 1,
      timeout: 15_000,
      telemetry: false,
    });
    return this.client;
  }

  private translate(err: unknown, subject: ProviderSubject): unknown {
    // By the SDK's type names rather than instanceof: tests may load the SDK's CommonJS and ESM builds side by side.
    const e = err as {
      type?: string;
      code?: string;
      message?: string;
      statusCode?: number;
      decline_code?: string;
    };
    switch (e.type) {
      case 'StripeCardError':
        return new PaymentRequired(
          `the card was declined: ${e.message ?? 'no reason given'}`,
          e.code ?? 'card_error',
        );
      case 'StripeInvalidRequestError':
        if (e.code === 'resource_missing' || e.statusCode === 404) return new NotFound(subject);
        return new BadRequest(`the payment provider refused the request: ${e.message ?? 'no reason given'}`);
      case 'StripeConnectionError':
      case 'StripeAPIError':
      case 'StripeAuthenticationError':
      case 'StripePermissionError':
      case 'StripeRateLimitError':
      case 'StripeIdempotencyError':
      case 'StripeError':
        this.log.warn(
          { type: e.type, status: e.statusCode, reason: e.message },
          'payment provider call failed',
        );
        return new FailedDependency(
          'the payment provider did not answer; try again in a moment',
          'provider_unavailable',
        );
      default:
        if (typeof e.type === 'string' && e.type.startsWith('Stripe')) {
          this.log.warn({ type: e.type, reason: e.message }, 'payment provider call failed');
          return new FailedDependency(
            'the payment provider did not answer; try again in a moment',
            'provider_unavailable',
          );
        }
        return err;
    }
  }
}
