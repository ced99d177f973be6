import { defineWebModule, icons } from '@gatehouse/console';
import { lazy } from 'react';
import { PendingBadge } from './devices/pending-badge';
import { terminalAction } from './devices/terminal-action';
import { LiveEvents } from './live';

// The base product's console: every screen of the community edition, each loaded only when opened.
const page = <T extends Record<string, unknown>>(load: () => Promise<T>, name: keyof T) =>
  lazy(async () => ({ default: (await load())[name] as never }));

export default defineWebModule({
  name: 'community',
  // The console's one event stream, held while signed in.
  overlays: [LiveEvents],
  nav: [
    { to: '/', label: 'Home', icon: icons.home, order: 0 },
    { to: '/devices', label: 'Devices', icon: icons.devices, order: 10, badge: PendingBadge },
    { to: '/sessions', label: 'Sessions', icon: icons.sessions, order: 30 },
    { to: '/public-keys', label: 'Public keys', icon: icons.key, section: 'manage', order: 40 },
    { to: '/firewall', label: 'Firewall rules', icon: icons.shield, section: 'manage', order: 50 },
    { to: '/tags', label: 'Tags', icon: icons.tag, section: 'manage', order: 60 },
    {
      to: '/settings/namespace',
      label: 'Namespace',
      icon: icons.settings,
      section: 'settings',
      order: 90,
      settingsScope: 'namespace',
    },
    {
      to: '/settings/profile',
      label: 'Account',
      icon: icons.user,
      section: 'settings',
      order: 95,
      settingsScope: 'account',
    },
    {
      to: '/instance/users',
      label: 'Users',
      icon: icons.user,
      section: 'instance',
      order: 100,
      instanceAdmin: true,
    },
    {
      to: '/instance/namespaces',
      label: 'Namespaces',
      icon: icons.users,
      section: 'instance',
      order: 110,
      instanceAdmin: true,
    },
    {
      to: '/instance/health',
      label: 'Health',
      icon: icons.plug,
      section: 'instance',
      order: 120,
      instanceAdmin: true,
    },
  ],
  pages: [
    { path: '/', title: 'Home', component: page(() => import('./home'), 'HomePage') },
    { path: '/devices', title: 'Devices', component: page(() => import('./devices/list'), 'DevicesPage') },
    {
      path: '/devices/:status',
      title: 'Devices',
      component: page(() => import('./devices/list'), 'DevicesPage'),
    },
    {
      path: '/device/:uid',
      title: 'Device',
      component: page(() => import('./devices/details'), 'DeviceDetailsPage'),
    },
    {
      path: '/device/:uid/terminal',
      title: 'Terminal',
      component: page(() => import('./devices/terminal'), 'TerminalPage'),
    },
    // Containers are what a container-engine connector exposes: the edition with connectors puts them in the
    // navigation; an agent running inside a container is a device.
    {
      path: '/containers',
      title: 'Containers',
      component: page(() => import('./devices/list'), 'ContainersPage'),
    },
    {
      path: '/containers/:status',
      title: 'Containers',
      component: page(() => import('./devices/list'), 'ContainersPage'),
    },
    {
      path: '/container/:uid',
      title: 'Container',
      component: page(() => import('./devices/details'), 'ContainerDetailsPage'),
    },
    {
      path: '/container/:uid/terminal',
      title: 'Terminal',
      component: page(() => import('./devices/terminal'), 'ContainerTerminalPage'),
    },
    {
      path: '/sessions',
      title: 'Sessions',
      component: page(() => import('./sessions/list'), 'SessionsPage'),
    },
    {
      path: '/sessions/:uid',
      title: 'Session',
      component: page(() => import('./sessions/details'), 'SessionDetailsPage'),
    },
    {
      path: '/public-keys',
      title: 'Public keys',
      component: page(() => import('./access/public-keys'), 'PublicKeysPage'),
    },
    {
      path: '/firewall',
      title: 'Firewall rules',
      component: page(() => import('./access/firewall'), 'FirewallPage'),
    },
    { path: '/tags', title: 'Tags', component: page(() => import('./access/tags'), 'TagsPage') },
    // Instance administration: instance administrators only (the shell hides the items and refuses the pages).
    {
      path: '/instance/users',
      title: 'Users',
      instanceAdmin: true,
      component: page(() => import('./instance/users'), 'InstanceUsersPage'),
    },
    {
      path: '/instance/namespaces',
      title: 'Namespaces',
      instanceAdmin: true,
      component: page(() => import('./instance/namespaces'), 'InstanceNamespacesPage'),
    },
    {
      path: '/instance/health',
      title: 'Health',
      instanceAdmin: true,
      component: page(() => import('./instance/health'), 'InstanceHealthPage'),
    },
  ],
  publicPages: [
    {
      path: '/share/:token',
      title: 'Shared terminal',
      component: page(() => import('./sessions/shares'), 'SharedSessionPage'),
    },
  ],
  settingsTabs: [
    {
      id: 'profile',
      label: 'Profile',
      scope: 'account',
      order: 0,
      component: page(() => import('./settings/profile'), 'ProfileTab'),
    },
    {
      id: 'security',
      label: 'Password & MFA',
      scope: 'account',
      order: 10,
      component: page(() => import('./settings/security'), 'SecurityTab'),
    },
    {
      id: 'namespace',
      label: 'General',
      scope: 'namespace',
      order: 20,
      component: page(() => import('./settings/namespace'), 'NamespaceTab'),
    },
    {
      id: 'members',
      label: 'Members',
      scope: 'namespace',
      order: 30,
      component: page(() => import('./settings/members'), 'MembersTab'),
    },
    {
      id: 'api-keys',
      label: 'API keys',
      scope: 'namespace',
      order: 40,
      component: page(() => import('./settings/api-keys'), 'ApiKeysTab'),
    },
    {
      id: 'install-keys',
      label: 'Install keys',
      scope: 'namespace',
      order: 45,
      component: page(() => import('./settings/install-keys'), 'InstallKeysTab'),
    },
  ],
  deviceActions: [terminalAction],
});
