import { defineWebModule, icons } from '@gatehouse/web/shell';
import { lazy } from 'react';

// Cloud edition: the namespace's subscription and billing.
export default defineWebModule({
  name: 'cloud',
  nav: [{ to: '/billing', label: 'Billing', icon: icons.card, section: 'settings', order: 95 }],
  pages: [
    {
      path: '/billing',
      title: 'Billing',
      component: lazy(async () => ({ default: (await import('./billing')).BillingPage })),
    },
  ],
});
