import type { ComponentType, LazyExoticComponent, ReactNode } from 'react';
import type { ApiClient } from './api/client';
import type { DeviceSummary, InstanceInfo, Role } from './api/types';

// The typed slots a plugin's web module fills (see docs/content/developers/console-modules.md). The shell renders them; a plugin never
// reaches into the shell's layout.

export type PageComponent = ComponentType<{ params: Record<string, string> }>;

export interface NavItem {
  /** Where the item links to, e.g. "/devices". */
  to: string;
  label: string;
  icon: ReactNode;
  section?: 'main' | 'manage' | 'settings' | 'instance';
  /** Lower numbers come first. */
  order: number;
  /** Drawn after the label, e.g. a count of what waits there; it renders nothing when there is nothing to say. */
  badge?: ComponentType;
  /** For a settings item: it is the current page on every settings tab of this scope. */
  settingsScope?: 'account' | 'namespace';
  /** Shown to instance administrators only. */
  instanceAdmin?: boolean;
}

export interface PageEntry {
  path: string;
  title: string;
  component: LazyExoticComponent<PageComponent> | PageComponent;
  /** For instance administrators only: anyone else gets a page saying so (the API refuses them too). */
  instanceAdmin?: boolean;
}

export interface SettingsTab {
  id: string;
  label: string;
  /**
   * "account" tabs make up the Account settings (the person, in every namespace), "namespace" tabs the Namespace
   * settings (the current namespace); each is at /settings/<id>.
   */
  scope: 'account' | 'namespace';
  order: number;
  component: LazyExoticComponent<ComponentType> | ComponentType;
}

export interface DeviceActionContext {
  device: DeviceSummary;
  /** The console path of this device's page (`/device/<uid>` or `/container/<uid>`). */
  detailsPath: string;
  api: ApiClient;
  refresh: () => void;
}

export interface DeviceAction {
  id: string;
  label: string;
  /** Whether the action is offered for this device (e.g. only for accepted, online devices). */
  available: (device: DeviceSummary, role: Role | '' | undefined) => boolean;
  component: ComponentType<DeviceActionContext>;
}

export interface WebModule {
  name: string;
  nav?: NavItem[];
  pages?: PageEntry[];
  settingsTabs?: SettingsTab[];
  deviceActions?: DeviceAction[];
  /** Extra content on the sign-in screen (e.g. single sign-on), given the instance info. */
  signIn?: ComponentType<{ info: InstanceInfo }>;
  /**
   * Ends the sign-in in the plugin's own way instead of the shell's DELETE /api/auth/user (SAML single logout).
   * Resolves to the address to send the browser to afterwards ('' for none), or null when it did not end it.
   */
  signOut?: SignOutHandler;
  /**
   * Drawn where a device cannot be accepted because of the namespace's device limit (or an acceptance answered
   * 402): what the plugin offers about it (cloud billing: subscribe, with a link to Billing).
   */
  deviceLimit?: ComponentType;
  /**
   * Pages anyone reaches without signing in, drawn without the console's frame (cloud: sign-up, e-mail
   * verification, password recovery). Signed in, they show as well.
   */
  publicPages?: PageEntry[];
  /** Drawn over every signed-in screen (cloud: a new announcement, once per user). */
  overlays?: ComponentType[];
  /**
   * Drawn in the namespace's Members screen, after the member list, for those who manage members (cloud: inviting by
   * e-mail and the invitations still pending).
   */
  members?: LazyExoticComponent<ComponentType> | ComponentType;
}

export type SignOutHandler = (api: ApiClient, info: InstanceInfo) => Promise<string | null>;

export function defineWebModule(module: WebModule): WebModule {
  return module;
}

/** All loaded modules' slots, merged in a stable order. */
export interface Slots {
  nav: NavItem[];
  pages: PageEntry[];
  settingsTabs: SettingsTab[];
  deviceActions: DeviceAction[];
  signIn: ComponentType<{ info: InstanceInfo }>[];
  signOut: SignOutHandler[];
  deviceLimit: ComponentType[];
  publicPages: PageEntry[];
  overlays: ComponentType[];
  members: (LazyExoticComponent<ComponentType> | ComponentType)[];
}

export function mergeSlots(modules: WebModule[]): Slots {
  return {
    nav: modules.flatMap((m) => m.nav ?? []).sort((a, b) => a.order - b.order),
    pages: modules.flatMap((m) => m.pages ?? []),
    settingsTabs: modules.flatMap((m) => m.settingsTabs ?? []).sort((a, b) => a.order - b.order),
    deviceActions: modules.flatMap((m) => m.deviceActions ?? []),
    signIn: modules.flatMap((m) => (m.signIn ? [m.signIn] : [])),
    signOut: modules.flatMap((m) => (m.signOut ? [m.signOut] : [])),
    deviceLimit: modules.flatMap((m) => (m.deviceLimit ? [m.deviceLimit] : [])),
    publicPages: modules.flatMap((m) => m.publicPages ?? []),
    overlays: modules.flatMap((m) => m.overlays ?? []),
    members: modules.flatMap((m) => (m.members ? [m.members] : [])),
  };
}
