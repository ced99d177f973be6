import { definePlugin } from '@gatehouse/core';
import { registerAccounts } from './accounts/index';
import { announcementCommands } from './announcements/cli';
import { registerAnnouncements } from './announcements/index';
import { billingConfigSchema, billingEnv } from './billing/config';
import { registerBilling } from './billing/index';
import { registerInvitations } from './invitations/index';

/** cloud edition plugin. */
export default definePlugin({
  name: 'cloud',
  dependsOn: ['community'],
  // Its settings are billing's, under `billing` with their GATEHOUSE_STRIPE_* variables.
  configSchema: billingConfigSchema,
  configKey: 'billing',
  configEnv: billingEnv,
  migrations: new URL('./migrations/', import.meta.url),
  cli: announcementCommands,
  console: { dir: new URL('./web/dist/', import.meta.url), entry: 'index.js' },
  register(ctx) {
    registerBilling(ctx);
    registerAccounts(ctx);
    registerInvitations(ctx);
    registerAnnouncements(ctx);
  },
});
