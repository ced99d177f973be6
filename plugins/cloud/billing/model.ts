import { StoreModel, TenantModel } from '@gatehouse/core';

/** A namespace's customer at the payment provider (one per namespace). */
export class BillingCustomer extends TenantModel {
  static override tableName = 'billing_customers';
  static override idColumn = 'tenant_id';

  declare tenant_id: string;
  /** Stripe's customer id (`cus_...`), unique across the installation. */
  declare customer_id: string;
  declare created_at: Date;
}

/** A namespace's subscription as the provider last reported it (through a call's answer or a webhook event). */
export class BillingSubscription extends TenantModel {
  static override tableName = 'billing_subscriptions';
  static override idColumn = 'tenant_id';

  declare tenant_id: string;
  declare subscription_id: string;
  /** The subscription item whose quantity is the number of accepted devices. */
  declare item_id: string | null;
  /** Stripe's status as given. */
  declare status: string;
  declare cancel_at_period_end: boolean;
  declare end_at: Date | null;
  /** The quantity last reported; a failed report is sent again at the next chance. */
  declare reported_devices: number | null;
  /** The provider's time of what is held: an older event arriving late changes nothing. */
  declare state_at: Date;
}

/** An invoice of a namespace's subscription. */
export class BillingInvoice extends TenantModel {
  static override tableName = 'billing_invoices';

  declare id: string;
  declare tenant_id: string;
  declare subscription_id: string | null;
  declare status: 'draft' | 'open' | 'paid' | 'uncollectible' | 'voided';
  declare currency: string;
  /** In cents (a bigint column, read as a number). */
  declare amount: number;
  declare created_at: Date;
  declare state_at: Date;
}

/** A device kept reachable when the namespace's subscription lapses. */
export class BillingDeviceChoice extends TenantModel {
  static override tableName = 'billing_device_choices';
  static override idColumn = ['tenant_id', 'device_uid'];

  declare tenant_id: string;
  declare device_uid: string;
  declare created_at: Date;
}

/** A provider event already applied (Stripe may deliver one more than once). Not tenant data: events name none. */
export class BillingWebhookEvent extends StoreModel {
  static override tableName = 'billing_webhook_events';

  declare id: string;
  declare type: string;
  declare received_at: Date;
}

/** A Stripe Checkout session (setup mode) a namespace opened to save a card; completed at most once. */
export class BillingCheckoutSession extends TenantModel {
  static override tableName = 'billing_checkout_sessions';
  static override idColumn = 'session_id';

  declare session_id: string;
  declare tenant_id: string;
  declare created_at: Date;
  declare completed_at: Date | null;
}
