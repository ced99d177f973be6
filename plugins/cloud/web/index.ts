import { defineWebModule, icons } from '@gatehouse/console';
import { lazy } from 'react';
import { SignInLinks } from './accounts';
import { NewAnnouncement } from './announcements';
import { SubscribeForMoreDevices } from './limit';

const page = <T extends Record<string, unknown>>(load: () => Promise<T>, name: keyof T) =>
  lazy(async () => ({ default: (await load())[name] as never }));

// Cloud edition: the namespace's subscription and billing; sign-up, verification, password recovery and
// invitations by e-mail; announcements; deleting one's account.
export default defineWebModule({
  name: 'cloud',
  nav: [
    { to: '/billing', label: 'Billing', icon: icons.card, section: 'settings', order: 95 },
    {
      to: '/instance/announcements',
      label: 'Announcements',
      icon: icons.inbox,
      section: 'instance',
      order: 130,
      instanceAdmin: true,
    },
  ],
  pages: [
    {
      path: '/billing',
      title: 'Billing',
      component: lazy(async () => ({ default: (await import('./billing')).BillingPage })),
    },
    {
      path: '/accept-invite',
      title: 'Invitation',
      component: page(() => import('./invitations'), 'AcceptInvitePage'),
    },
    {
      path: '/instance/announcements',
      title: 'Announcements',
      instanceAdmin: true,
      component: page(() => import('./announcements-admin'), 'AnnouncementsAdminPage'),
    },
  ],
  publicPages: [
    { path: '/signup', title: 'Sign up', component: page(() => import('./accounts'), 'SignUpPage') },
    {
      path: '/validation_account',
      title: 'Confirm your e-mail address',
      component: page(() => import('./accounts'), 'VerifyAccountPage'),
    },
    {
      path: '/resend-verification',
      title: 'Confirm your e-mail address',
      component: page(() => import('./accounts'), 'ResendVerificationPage'),
    },
    {
      path: '/forgot-password',
      title: 'Forgot your password?',
      component: page(() => import('./accounts'), 'ForgotPasswordPage'),
    },
    {
      path: '/reset-password',
      title: 'Choose a new password',
      component: page(() => import('./accounts'), 'ResetPasswordPage'),
    },
  ],
  settingsTabs: [
    {
      id: 'delete-account',
      label: 'Delete account',
      scope: 'account',
      order: 90,
      component: page(() => import('./delete-account'), 'DeleteAccountTab'),
    },
  ],
  members: lazy(async () => ({ default: (await import('./invitations')).MemberInvitations })),
  signIn: SignInLinks,
  overlays: [NewAnnouncement],
  deviceLimit: SubscribeForMoreDevices,
});
