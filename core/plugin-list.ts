import { ConfigError } from './config/load';
import type { PluginManifest, PluginResolver } from './plugin';

/**
 * The manifests of the configuration's `plugins` list, in its order, then the extra ones: each named once, each
 * after the plugins it depends on.
 */
export async function resolvePlugins(
  entries: readonly string[],
  resolve: PluginResolver,
  extra: readonly PluginManifest[] = [],
): Promise<PluginManifest[]> {
  const plugins: PluginManifest[] = [];
  const add = (manifest: PluginManifest, entry: string) => {
    if (plugins.some((p) => p.name === manifest.name)) {
      throw new ConfigError(`config: plugins lists "${manifest.name}" twice (entry "${entry}")`);
    }
    for (const dep of manifest.dependsOn) {
      if (!plugins.some((p) => p.name === dep)) {
        throw new ConfigError(`config: plugin "${manifest.name}" needs "${dep}" listed before it`);
      }
    }
    plugins.push(manifest);
  };
  for (const entry of entries) add(await resolve(entry), entry);
  for (const manifest of extra) add(manifest, manifest.name);
  return plugins;
}
