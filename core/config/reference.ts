import type { TSchema } from '@sinclair/typebox';
import type { PluginManifest } from '../plugin';
import { type Config, configSchema, envKeys } from './schema';

/** One setting as `gatehouse reference` lists it: its key, variable, default and meaning, and whose it is. */
export interface ConfigEntry {
  key: string;
  env: string | undefined;
  default: unknown;
  description: string;
  /** The plugin whose setting it is; absent for core's. */
  plugin?: string;
}

/**
 * Every setting: core's first, their defaults from `defaults` (the configuration of files alone), then each
 * plugin's in the order given, under its section (`configKey` or `pluginConfig.<name>`), with the defaults its
 * schema declares.
 */
export function configReference(
  defaults: Config,
  plugins: readonly Pick<PluginManifest, 'name' | 'configSchema' | 'configKey' | 'configEnv'>[],
): ConfigEntry[] {
  const entries = leaves(configSchema, '', envKeys, (key) => pick(defaults, key));
  for (const p of plugins) {
    if (!p.configSchema) continue;
    const section = p.configKey ?? `pluginConfig.${p.name}`;
    for (const entry of leaves(p.configSchema, '', p.configEnv ?? {}, (_key, node) => node.default)) {
      entries.push({ ...entry, key: `${section}.${entry.key}`, plugin: p.name });
    }
  }
  return entries;
}

/** The leaves of a settings schema (objects with properties are walked into), with their variables. */
function leaves(
  schema: TSchema,
  prefix: string,
  env: Record<string, string>,
  defaultOf: (key: string, node: TSchema) => unknown,
): ConfigEntry[] {
  const out: ConfigEntry[] = [];
  for (const [k, node] of Object.entries((schema.properties ?? {}) as Record<string, TSchema>)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (node.type === 'object' && node.properties) out.push(...leaves(node, key, env, defaultOf));
    else {
      const variable = Object.entries(env).find(([, v]) => v === key)?.[0];
      out.push({ key, env: variable, default: defaultOf(key, node), description: node.description ?? '' });
    }
  }
  return out;
}

function pick(tree: unknown, key: string): unknown {
  let cur = tree;
  for (const part of key.split('.')) cur = (cur as Record<string, unknown> | undefined)?.[part];
  return cur;
}
