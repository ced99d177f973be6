import type { PluginManifest } from './plugin';

/**
 * The host lists its plugins explicitly (Backstage): the edition files in config/ choose among these by name.
 * Loaded lazily so an edition never imports code it does not run.
 */
export const pluginLoaders: Record<string, () => Promise<PluginManifest>> = {
  community: async () => (await import('@gatehouse/plugin-community')).default,
  enterprise: async () => (await import('@gatehouse/plugin-enterprise')).default,
  cloud: async () => (await import('@gatehouse/plugin-cloud')).default,
};
