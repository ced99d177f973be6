import { defineWebModule, icons } from '@gatehouse/web/shell';
import { lazy } from 'react';
import { SamlSignIn } from './saml-sign-in';

// Enterprise edition: single sign-on on the sign-in screen and container-engine connectors.
export default defineWebModule({
  name: 'enterprise',
  nav: [{ to: '/connectors', label: 'Connectors', icon: icons.plug, section: 'manage', order: 45 }],
  pages: [
    {
      path: '/connectors',
      title: 'Connectors',
      component: lazy(async () => ({ default: (await import('./connectors')).ConnectorsPage })),
    },
  ],
  signIn: SamlSignIn,
});
