import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { TSchema } from '@sinclair/typebox';
import { parse as parseYaml } from 'yaml';
import type { Installation } from '../installation';
import { createAjv } from '../validation';
import { type Config, configSchema, envKeys } from './schema';

export class ConfigError extends Error {}

/** Where the configuration files are, and which editions there are: the host's to say. */
export type ConfigLayout = Pick<Installation, 'configDir' | 'editions'>;

type Tree = Record<string, unknown>;

/**
 * What the configuration sources say before the plugins are known: core's settings, validated, and the sections
 * the plugins read (`RegisterContext.pluginConfig`), which `pluginSettings` checks once the plugins are loaded.
 */
export interface ReadConfig {
  config: Config;
  sections: ConfigSections;
}

/**
 * Loads the layout's default.yaml, then <edition>.yaml, then the GATEHOUSE_CONFIG file, then environment
 * variables, then `overrides` (used by tests and the CLI), and validates core's settings once. Top-level keys that
 * are not core's are left in `sections` for the plugins that declare them. Nothing else in the code reads
 * process.env.
 */
export function readConfig(
  layout: ConfigLayout,
  env: NodeJS.ProcessEnv = process.env,
  overrides: Tree = {},
): ReadConfig {
  const files: Tree = readYaml(path.join(layout.configDir, 'default.yaml'));
  const fromEnv = envTree(env, envKeys, configSchema, { key: '' });
  const edition = String(pick(overrides, 'edition') ?? pick(fromEnv, 'edition') ?? pick(files, 'edition'));
  if (!layout.editions.includes(edition)) {
    throw new ConfigError(
      `config: edition (GATEHOUSE_EDITION) must be one of ${layout.editions.join(', ')}; got "${edition}"`,
    );
  }
  merge(files, readYaml(path.join(layout.configDir, `${edition}.yaml`)));
  if (env.GATEHOUSE_CONFIG) {
    if (!existsSync(env.GATEHOUSE_CONFIG)) {
      throw new ConfigError(
        `config: GATEHOUSE_CONFIG points at ${env.GATEHOUSE_CONFIG}, which does not exist`,
      );
    }
    merge(files, readYaml(env.GATEHOUSE_CONFIG));
  }
  const sections = new ConfigSections(structuredClone(files), structuredClone(overrides), env);
  const tree = coreKeys(files);
  merge(tree, fromEnv);
  merge(tree, coreKeys(overrides));
  tree.edition = edition;
  const http = (tree.http ?? {}) as Tree;
  tree.publicUrl ??= `http://localhost:${String(http.port ?? 8080)}`;
  tree.dataDir = path.resolve(String(tree.dataDir ?? './data'));
  const config = validateConfig(tree);
  // One form for every link the server makes (setup, invitations, SAML, MFA reset): no trailing slash, so
  // `${publicUrl}/path` never doubles it.
  config.publicUrl = config.publicUrl.replace(/\/+$/, '');
  return { config, sections };
}

/** Core's settings alone, as `readConfig` reads them; a top-level key that is not core's is refused here. */
export function loadConfig(
  layout: ConfigLayout,
  env: NodeJS.ProcessEnv = process.env,
  overrides: Tree = {},
): Config {
  const { config, sections } = readConfig(layout, env, overrides);
  sections.refuseUnclaimed([]);
  return config;
}

/** The plugins an edition's own file lists (<edition>.yaml of the layout), before any operator's changes. */
export function editionPlugins(layout: ConfigLayout, edition: string): string[] {
  const listed = readYaml(path.join(layout.configDir, `${edition}.yaml`)).plugins;
  return Array.isArray(listed) ? listed.map(String) : [];
}

/** Whose settings a check is about: core's (key ''), or a plugin's section at `key`. */
interface Owner {
  key: string;
  plugin?: string;
}

/**
 * The sources' settings of the plugins, by section: what the files say, then the section's own environment
 * variables, then the overrides. Each section is read by the plugin that declares it; `refuseUnclaimed` stops on a
 * top-level key neither core nor any running plugin reads (a typo, or a plugin that is not listed).
 */
export class ConfigSections {
  private readonly claimed = new Set<string>();

  constructor(
    private readonly files: Tree,
    private readonly overrides: Tree,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  /** A plugin's settings at `key` (`saml`, or `pluginConfig.<name>`), validated against `schema`, defaults in. */
  read(
    key: string,
    plugin: string,
    schema: TSchema | undefined,
    env: Record<string, string> = {},
  ): Record<string, unknown> {
    this.claimed.add(key.split('.')[0] as string);
    const owner = { key, plugin };
    const tree: Tree = {};
    merge(tree, asTree(pick(this.files, key)));
    if (schema) merge(tree, envTree(this.env, env, schema, owner));
    merge(tree, asTree(pick(this.overrides, key)));
    return schema ? checked(schema, tree, owner, env) : tree;
  }

  /** Stops on a top-level key of the files or the overrides that neither core nor a running plugin reads. */
  refuseUnclaimed(running: readonly string[]): void {
    const known = new Set(Object.keys(configSchema.properties));
    for (const key of new Set([...Object.keys(this.files), ...Object.keys(this.overrides)])) {
      if (known.has(key) || this.claimed.has(key)) continue;
      const plugins = running.length ? ` or of the plugins that run (${running.join(', ')})` : '';
      throw new ConfigError(`config: unknown key "${key}": no setting of core${plugins} has that name`);
    }
  }
}

export function validateConfig(tree: Tree): Config {
  return checked(configSchema, tree, { key: '' }, envKeys) as Config;
}

/**
 * `tree` checked against `schema` (defaults filled in); the first failure stops with a message naming the
 * plugin, the key and its variable, and what it got.
 */
function checked(schema: TSchema, tree: Tree, owner: Owner, env: Record<string, string>): Tree {
  const validate = createAjv().compile(schema);
  if (validate(tree)) return tree;
  const first = validate.errors?.[0];
  const inner = (first?.instancePath ?? '').replace(/^\//, '').replaceAll('/', '.');
  const key = [owner.key, inner].filter(Boolean).join('.') || '(root)';
  const variable = Object.entries(env).find(([, k]) => k === inner)?.[0];
  const extra =
    first?.keyword === 'additionalProperties'
      ? ` (unknown key "${String((first.params as { additionalProperty?: string }).additionalProperty)}")`
      : '';
  throw new ConfigError(
    `config: ${whose(owner)}${key}${variable ? ` (${variable})` : ''} ${first?.message ?? 'is invalid'}${extra}; got ${JSON.stringify(
      pick(tree, inner || '(root)'),
    )}`,
  );
}

function whose(owner: Owner): string {
  return owner.plugin ? `plugin ${owner.plugin}: ` : '';
}

/** The top-level keys of a tree that are core's settings. */
function coreKeys(tree: Tree): Tree {
  const known = configSchema.properties as Record<string, unknown>;
  return Object.fromEntries(Object.entries(tree).filter(([k]) => k in known));
}

function asTree(value: unknown): Tree {
  return value && typeof value === 'object' && !Array.isArray(value) ? structuredClone(value as Tree) : {};
}

function readYaml(file: string): Tree {
  if (!existsSync(file)) return {};
  const parsed: unknown = parseYaml(readFileSync(file, 'utf8'));
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError(`config: ${file} must hold a YAML mapping`);
  }
  return parsed as Tree;
}

/**
 * Turns GATEHOUSE_* variables into a tree of the keys they set (each relative to `schema`), converting each value
 * to the type its key's schema asks for.
 */
function envTree(env: NodeJS.ProcessEnv, names: Record<string, string>, schema: TSchema, owner: Owner): Tree {
  const tree: Tree = {};
  for (const [name, inner] of Object.entries(names)) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    const at = schemaAt(schema, inner);
    const key = `${whose(owner)}${[owner.key, inner].filter(Boolean).join('.')} (${name})`;
    let value: unknown = raw;
    if (at?.type === 'integer') {
      if (!/^-?\d+$/.test(raw.trim()))
        throw new ConfigError(`config: ${key} must be an integer; got "${raw}"`);
      value = Number(raw.trim());
    } else if (at?.type === 'boolean') {
      if (!/^(true|false|1|0|yes|no)$/i.test(raw)) {
        throw new ConfigError(`config: ${key} must be true or false; got "${raw}"`);
      }
      value = /^(true|1|yes)$/i.test(raw);
    }
    setAt(tree, inner, value);
  }
  return tree;
}

/** The schema of the key `key` (dotted) inside `schema`, if it has one. */
export function schemaAt(schema: TSchema, key: string): TSchema | undefined {
  let cur: TSchema | undefined = schema;
  for (const part of key.split('.')) {
    cur = (cur?.properties as Record<string, TSchema> | undefined)?.[part];
  }
  return cur;
}

function pick(tree: Tree, key: string): unknown {
  let cur: unknown = tree;
  for (const part of key.split('.')) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Tree)[part];
  }
  return cur;
}

function setAt(tree: Tree, key: string, value: unknown): void {
  const parts = key.split('.');
  let cur = tree;
  for (const part of parts.slice(0, -1)) {
    if (typeof cur[part] !== 'object' || cur[part] === null) cur[part] = {};
    cur = cur[part] as Tree;
  }
  cur[parts.at(-1) as string] = value;
}

function merge(into: Tree, from: Tree): void {
  for (const [k, v] of Object.entries(from)) {
    if (v && typeof v === 'object' && !Array.isArray(v) && into[k] && typeof into[k] === 'object') {
      merge(into[k] as Tree, v as Tree);
    } else {
      into[k] = v;
    }
  }
}
