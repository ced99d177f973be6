import type { SidebarsConfig } from '@docusaurus/plugin-content-docs';

// Each top-level area of the site has its own sidebar so the navbar reads as the map of the site.
const sidebars: SidebarsConfig = {
  overview: [
    'introduction',
    'overview/concepts',
    'overview/features',
    'overview/editions',
    {
      type: 'category',
      label: 'Getting started',
      link: { type: 'doc', id: 'overview/getting-started/index' },
      items: ['overview/getting-started/cloud'],
    },
    {
      type: 'category',
      label: 'Supported platforms',
      link: { type: 'doc', id: 'overview/supported-platforms/index' },
      items: [
        'overview/supported-platforms/buildroot',
        'overview/supported-platforms/freebsd',
        'overview/supported-platforms/snap',
        'overview/supported-platforms/wsl',
        'overview/supported-platforms/yocto',
      ],
    },
    'overview/faq',
  ],
  selfHosted: [
    'self-hosted/deploying',
    'self-hosted/configuring',
    'self-hosted/administration',
    'self-hosted/security',
    'self-hosted/upgrading',
    'self-hosted/troubleshooting',
    'self-hosted/reference',
  ],
  userGuides: [
    {
      type: 'category',
      label: 'Devices',
      items: [
        'user-guides/devices/adding',
        'user-guides/devices/device-list',
        'user-guides/devices/connecting',
        'user-guides/devices/tagging',
        'user-guides/devices/custom-fields',
        'user-guides/devices/tunnels',
        'user-guides/devices/containers',
      ],
    },
    {
      type: 'category',
      label: 'Sessions',
      items: ['user-guides/sessions/introduction', 'user-guides/sessions/session-recording'],
    },
    {
      type: 'category',
      label: 'Namespaces',
      link: { type: 'doc', id: 'user-guides/namespaces/index' },
      items: [
        'user-guides/namespaces/switching',
        'user-guides/namespaces/retrieving-your-tenant-id',
        'user-guides/namespaces/connection-announcment',
      ],
    },
    {
      type: 'category',
      label: 'Firewall',
      link: { type: 'doc', id: 'user-guides/firewall/index' },
      items: ['user-guides/firewall/create', 'user-guides/firewall/policies'],
    },
    'user-guides/security/publickey-authentication',
    {
      type: 'category',
      label: 'Members',
      link: { type: 'doc', id: 'user-guides/settings/namespace/members/index' },
      items: [
        'user-guides/settings/namespace/members/roles',
        'user-guides/settings/namespace/members/invite',
        'user-guides/settings/namespace/members/accept-invite',
        'user-guides/settings/namespace/members/edit',
        'user-guides/settings/namespace/members/remove',
      ],
    },
    {
      type: 'category',
      label: 'API keys',
      link: { type: 'doc', id: 'user-guides/settings/namespace/api-keys/index' },
      items: [
        'user-guides/settings/namespace/api-keys/create',
        'user-guides/settings/namespace/api-keys/use',
        'user-guides/settings/namespace/api-keys/update',
        'user-guides/settings/namespace/api-keys/delete',
      ],
    },
    'user-guides/settings/namespace/billing',
    {
      type: 'category',
      label: 'Multi-factor authentication',
      items: [
        'user-guides/settings/account/mfa/about-mfa',
        'user-guides/settings/account/mfa/configure-mfa',
        'user-guides/settings/account/mfa/logging-in',
        'user-guides/settings/account/mfa/recovery-access',
      ],
    },
  ],
  adminGuides: [
    {
      type: 'category',
      label: 'Local authentication',
      items: [
        'admin-guides/authentication/local/enabling-method',
        'admin-guides/authentication/local/configuring',
      ],
    },
    {
      type: 'category',
      label: 'SAML single sign-on',
      items: [
        'admin-guides/authentication/saml/authentication',
        {
          type: 'category',
          label: 'Configuring',
          items: [
            'admin-guides/authentication/saml/configuring/enabling-with-metadata',
            'admin-guides/authentication/saml/configuring/enabling-manual',
            'admin-guides/authentication/saml/configuring/disabling',
          ],
        },
        'admin-guides/authentication/saml/mapping',
        'admin-guides/authentication/saml/signed_authn_requests',
      ],
    },
  ],
  developers: [
    'developers/architecture',
    'developers/agent/installing',
    'developers/agent/configuring',
    'developers/agent/protocol',
    'developers/gateway',
    'developers/event-stream',

    'developers/development',
    'developers/writing-a-plugin',
    'developers/models',
    'developers/console-modules',
    { type: 'link', label: 'Community API reference', href: '/developers/openapi/community' },
    { type: 'link', label: 'Cloud API reference', href: '/developers/openapi/cloud' },
  ],
};

export default sidebars;
