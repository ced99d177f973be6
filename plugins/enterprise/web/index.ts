import { defineWebModule, icons } from '@gatehouse/console';
import { lazy } from 'react';
import { calls } from './api';
import { SamlSignIn } from './saml-sign-in';

// Enterprise edition: single sign-on on the sign-in screen and container-engine connectors.
export default defineWebModule({
  name: 'enterprise',
  // The community module serves the container pages; the edition with connectors lists them.
  nav: [
    { to: '/containers', label: 'Containers', icon: icons.containers, order: 20 },
    { to: '/connectors', label: 'Connectors', icon: icons.plug, section: 'manage', order: 45 },
    {
      to: '/instance/sso',
      label: 'Single sign-on',
      icon: icons.key,
      section: 'instance',
      order: 115,
      instanceAdmin: true,
    },
  ],
  pages: [
    {
      path: '/connectors',
      title: 'Connectors',
      component: lazy(async () => ({ default: (await import('./connectors')).ConnectorsPage })),
    },
    {
      path: '/instance/sso',
      title: 'Single sign-on',
      instanceAdmin: true,
      component: lazy(async () => ({ default: (await import('./saml-settings')).SamlSettingsPage })),
    },
  ],
  signIn: SamlSignIn,
  // With SAML on, sign-out goes through the SAML call: it ends the sign-in, and answers the IdP's single logout
  // address when the sign-in came through SAML and the IdP offers one.
  signOut: async (api, info) => {
    if (!info.authentication.saml) return null;
    const answer = await api.call<{ url: string }>(calls.samlLogout, { allowUnauthorized: true });
    return answer.url;
  },
});
