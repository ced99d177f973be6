import type { RegisterContext } from '@gatehouse/core';
import { asClass, asValue } from 'awilix';
import type { BillingConfig } from './config';
import { BillingProvider } from './provider';
import { billingRoutes } from './routes';
import { BillingService } from './service';

declare module '@gatehouse/core/cradle' {
  interface Cradle {
    /** The payment provider (Stripe SDK); its failures answer 424. */
    billingProvider: BillingProvider;
    /** Customer, cards, subscription, invoices and the device rules that depend on them. */
    billing: BillingService;
    /** The `billing.*` settings (the cloud plugin's configuration). */
    billingConfig: BillingConfig;
  }
}

/**
 * Billing of the cloud edition: the `/api/billing/*` calls and the provider's webhook, and the hooks
 * through which billing changes what the base product does: 402 on accepting beyond the free devices without a
 * subscription, usage reported after each acceptance, the subscription ended before a namespace is deleted (and,
 * before an account is deleted, those of every namespace it alone owns), and only the chosen devices reachable once a
 * subscription lapsed.
 */
export function registerBilling(ctx: RegisterContext): void {
  ctx.provide({
    billingConfig: asValue(ctx.pluginConfig as BillingConfig),
    billingProvider: asClass(BillingProvider).singleton(),
    billing: asClass(BillingService).singleton(),
  });
  ctx.routes(billingRoutes);
  ctx.hooks.on('device.beforeAccept', ({ tenantId, uid }) =>
    ctx.resolve('billing').checkAccept(tenantId, uid),
  );
  ctx.hooks.on('device.accepted', ({ tenantId }) => ctx.resolve('billing').afterAccept(tenantId));
  ctx.hooks.on('device.beforeConnect', ({ tenantId, uid }) =>
    ctx.resolve('billing').checkConnect(tenantId, uid),
  );
  ctx.hooks.on('namespace.view', async (view) => {
    view.billing = await ctx.resolve('billing').namespaceBilling(view.tenantId);
  });
  ctx.hooks.on('namespace.beforeDelete', ({ tenantId, trx }) =>
    ctx.resolve('billing').endForDeletion(tenantId, trx),
  );
  ctx.hooks.on('account.beforeDelete', ({ tenantIds, trx }) =>
    ctx.resolve('billing').settleAccount(tenantIds, trx),
  );
}
