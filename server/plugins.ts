import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { PluginManifest, PluginResolver } from '@gatehouse/core';
import { ConfigError } from '@gatehouse/core/config/load';

/**
 * The plugins this repository ships, by the names the edition files list (config/<edition>.yaml). Loaded lazily
 * so an edition never imports code it does not run.
 */
export const bundledPlugins: Record<string, () => Promise<PluginManifest>> = {
  community: async () => (await import('@gatehouse/plugin-community')).default,
  enterprise: async () => (await import('@gatehouse/plugin-enterprise')).default,
  cloud: async () => (await import('@gatehouse/plugin-cloud')).default,
};

/**
 * What an entry of the `plugins` list names: a bundled plugin by its name; a path (starting with `.` or `/`) to a
 * plugin's directory or entry file, relative to the directory of the GATEHOUSE_CONFIG file (else the working
 * directory); anything else is an npm package name, installed beside Gatehouse (or in the working directory).
 * Each must export its manifest as the module's default export.
 */
export function pluginResolver(env: NodeJS.ProcessEnv = process.env): PluginResolver {
  const base = env.GATEHOUSE_CONFIG ? path.dirname(path.resolve(env.GATEHOUSE_CONFIG)) : process.cwd();
  return async (entry) => {
    const bundled = bundledPlugins[entry];
    const loaded = bundled ? await bundled() : await importEntry(entry, base);
    return checkManifest(entry, loaded);
  };
}

async function importEntry(entry: string, base: string): Promise<unknown> {
  if (entry.startsWith('.') || path.isAbsolute(entry)) {
    const file = entryFile(path.resolve(base, entry), entry);
    return ((await import(pathToFileURL(file).href)) as { default?: unknown }).default;
  }
  if (!/^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*$/.test(entry)) {
    throw new ConfigError(
      `config: plugins entry "${entry}" is neither a bundled plugin (${Object.keys(bundledPlugins).join(', ')}), a path nor an npm package name`,
    );
  }
  let url: string;
  try {
    url = import.meta.resolve(entry);
  } catch {
    // Not installed beside Gatehouse: perhaps in the working directory's node_modules.
    try {
      url = pathToFileURL(createRequire(path.join(base, 'package.json')).resolve(entry)).href;
    } catch {
      throw new ConfigError(
        `config: plugins entry "${entry}" is not a bundled plugin (${Object.keys(bundledPlugins).join(', ')}) and no installed npm package has that name (npm install ${entry})`,
      );
    }
  }
  return ((await import(url)) as { default?: unknown }).default;
}

/** A plugin directory's entry file (its package.json `exports` or `main`, else index.js), or the file itself. */
function entryFile(where: string, entry: string): string {
  if (!existsSync(where)) throw new ConfigError(`config: plugins entry "${entry}": ${where} does not exist`);
  if (!statSync(where).isDirectory()) return where;
  const manifest = path.join(where, 'package.json');
  let main = 'index.js';
  if (existsSync(manifest)) {
    const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { exports?: unknown; main?: string };
    main = exportedMain(pkg.exports) ?? pkg.main ?? main;
  }
  return path.join(where, main);
}

function exportedMain(exports: unknown): string | undefined {
  if (typeof exports === 'string') return exports;
  if (!exports || typeof exports !== 'object') return undefined;
  const map = exports as Record<string, unknown>;
  const dot = '.' in map ? map['.'] : map;
  if (typeof dot === 'string') return dot;
  if (dot && typeof dot === 'object') {
    const conditions = dot as Record<string, unknown>;
    const pick = conditions.import ?? conditions.default;
    return typeof pick === 'string' ? pick : undefined;
  }
  return undefined;
}

function checkManifest(entry: string, value: unknown): PluginManifest {
  const m = value as Partial<PluginManifest> | undefined;
  if (
    !m ||
    typeof m !== 'object' ||
    typeof m.name !== 'string' ||
    !/^[a-z0-9][a-z0-9-]*$/.test(m.name) ||
    !Array.isArray(m.dependsOn) ||
    typeof m.register !== 'function'
  ) {
    throw new ConfigError(
      `config: plugins entry "${entry}" does not export a plugin manifest by default ({ name, dependsOn, register, ... }: see "Writing a plugin" in the developer docs)`,
    );
  }
  return m as PluginManifest;
}
