import { type Static, Type as T } from '@sinclair/typebox';

/**
 * The cloud plugin's settings, under `billing` in the configuration (its manifest's `configKey`), as they were when
 * core held them, so files and environments that set them keep working. The Stripe keys are never logged (the
 * logger redacts them by name).
 */
export const billingConfigSchema = T.Object(
  {
    stripeSecretKey: T.Optional(
      T.String({
        minLength: 1,
        description:
          'Secret API key of the Stripe account that bills the cloud edition (sk_live_... or sk_test_...); unset, every billing call answers 424 `billing_not_configured`. Never logged.',
      }),
    ),
    stripeWebhookSecret: T.Optional(
      T.String({
        minLength: 1,
        description:
          'Signing secret (whsec_...) of the Stripe webhook endpoint pointed at POST /api/billing/webhook; events whose signature it does not verify are refused. Never logged.',
      }),
    ),
    stripePlan: T.Optional(
      T.String({
        minLength: 1,
        description:
          'The Stripe plan (a recurring price per unit) a subscription is made of; its quantity is the number of accepted devices, and its amount is the price the console shows before Subscribe.',
      }),
    ),
    stripeApiBase: T.Optional(
      T.String({
        format: 'uri',
        description:
          'Where the Stripe API is reached (default https://api.stripe.com): only for tests and for self-hosters with a Stripe-compatible server.',
      }),
    ),
  },
  {
    description: 'Billing of the cloud edition through Stripe.',
  },
);

export type BillingConfig = Static<typeof billingConfigSchema>;

/** The variables of these settings, each with the key it sets. */
export const billingEnv: Record<string, string> = {
  GATEHOUSE_STRIPE_SECRET_KEY: 'stripeSecretKey',
  GATEHOUSE_STRIPE_WEBHOOK_SECRET: 'stripeWebhookSecret',
  GATEHOUSE_STRIPE_PLAN: 'stripePlan',
  GATEHOUSE_STRIPE_API_BASE: 'stripeApiBase',
};
