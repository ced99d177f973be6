import type { PluginManifest } from '../plugin';
import { ConfigError, type ConfigSections, schemaAt } from './load';
import { configSchema, envKeys } from './schema';

/**
 * Each running plugin's settings, read from its own section of the configuration (`configKey`, else
 * `pluginConfig.<name>`) with its own variables (`configEnv`), and checked against its `configSchema` with the
 * defaults filled in. Errors name the plugin. A section or a variable two owners claim, or a top-level key no one
 * reads, stops the start.
 */
export function pluginSettings(
  sections: ConfigSections,
  plugins: readonly PluginManifest[],
): Map<string, Record<string, unknown>> {
  const keys = new Map<string, string>();
  const variables = new Map<string, string>(Object.keys(envKeys).map((name) => [name, 'core']));
  const settings = new Map<string, Record<string, unknown>>();
  for (const p of plugins) {
    if (p.configKey !== undefined) {
      if (!/^[a-z][A-Za-z0-9]*$/.test(p.configKey) || p.configKey in configSchema.properties) {
        throw new ConfigError(
          `plugin ${p.name}: configKey "${p.configKey}" must be a top-level key of its own (a lower-case word, not one of core's)`,
        );
      }
      const other = keys.get(p.configKey);
      if (other)
        throw new ConfigError(`plugins ${other} and ${p.name} both read the settings under "${p.configKey}"`);
      keys.set(p.configKey, p.name);
    }
    for (const [name, inner] of Object.entries(p.configEnv ?? {})) {
      if (!/^GATEHOUSE_[A-Z0-9_]+$/.test(name)) {
        throw new ConfigError(`plugin ${p.name}: configEnv names ${name}; variables start with GATEHOUSE_`);
      }
      const other = variables.get(name);
      if (other)
        throw new ConfigError(
          `${other === 'core' ? 'core' : `plugin ${other}`} and plugin ${p.name} both read ${name}`,
        );
      if (!p.configSchema || !schemaAt(p.configSchema, inner)) {
        throw new ConfigError(
          `plugin ${p.name}: configEnv ${name} sets "${inner}", which its configSchema has no key for`,
        );
      }
      variables.set(name, p.name);
    }
    const key = p.configKey ?? `pluginConfig.${p.name}`;
    settings.set(p.name, sections.read(key, p.name, p.configSchema, p.configEnv));
  }
  sections.refuseUnclaimed(plugins.map((p) => p.name));
  return settings;
}
