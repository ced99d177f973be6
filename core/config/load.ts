import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TSchema } from '@sinclair/typebox';
import { parse as parseYaml } from 'yaml';
import { createAjv } from '../validation';
import { type Config, configSchema, envKeys } from './schema';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const configDir = path.join(repoRoot, 'config');

export class ConfigError extends Error {}

type Tree = Record<string, unknown>;

/**
 * Loads config/default.yaml, then config/<edition>.yaml, then the GATEHOUSE_CONFIG file, then environment
 * variables, then `overrides` (used by tests and the CLI), and validates the result once. Nothing else in the
 * code reads process.env.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Tree = {}): Config {
  const tree: Tree = readYaml(path.join(configDir, 'default.yaml'));
  const fromEnv = envTree(env);
  const edition = String(
    pick(overrides, 'edition') ?? pick(fromEnv, 'edition') ?? pick(tree, 'edition') ?? 'community',
  );
  if (!['community', 'enterprise', 'cloud'].includes(edition)) {
    throw new ConfigError(
      `config: edition (GATEHOUSE_EDITION) must be one of community, enterprise, cloud; got "${edition}"`,
    );
  }
  merge(tree, readYaml(path.join(configDir, `${edition}.yaml`)));
  if (env.GATEHOUSE_CONFIG) {
    if (!existsSync(env.GATEHOUSE_CONFIG)) {
      throw new ConfigError(
        `config: GATEHOUSE_CONFIG points at ${env.GATEHOUSE_CONFIG}, which does not exist`,
      );
    }
    merge(tree, readYaml(env.GATEHOUSE_CONFIG));
  }
  merge(tree, fromEnv);
  merge(tree, overrides);
  tree.edition = edition;
  const http = (tree.http ?? {}) as Tree;
  tree.publicUrl ??= `http://localhost:${String(http.port ?? 8080)}`;
  tree.dataDir = path.resolve(String(tree.dataDir ?? './data'));
  const config = validateConfig(tree);
  // One form for every link the server makes (setup, invitations, SAML, MFA reset): no trailing slash, so
  // `${publicUrl}/path` never doubles it.
  config.publicUrl = config.publicUrl.replace(/\/+$/, '');
  return config;
}

/** The plugins an edition's own file lists (config/<edition>.yaml), before any operator's changes. */
export function editionPlugins(edition: string): string[] {
  const listed = readYaml(path.join(configDir, `${edition}.yaml`)).plugins;
  return Array.isArray(listed) ? listed.map(String) : [];
}

export function validateConfig(tree: Tree): Config {
  const validate = createAjv().compile<Config>(configSchema);
  if (validate(tree)) return tree;
  const first = validate.errors?.[0];
  const key = (first?.instancePath ?? '').replace(/^\//, '').replaceAll('/', '.') || '(root)';
  const env = Object.entries(envKeys).find(([, k]) => k === key)?.[0];
  const extra =
    first?.keyword === 'additionalProperties'
      ? ` (unknown key "${String((first.params as { additionalProperty?: string }).additionalProperty)}")`
      : '';
  throw new ConfigError(
    `config: ${key}${env ? ` (${env})` : ''} ${first?.message ?? 'is invalid'}${extra}; got ${JSON.stringify(
      pick(tree, key),
    )}`,
  );
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

/** Turns GATEHOUSE_* variables into a tree, converting each value to the type its key's schema asks for. */
function envTree(env: NodeJS.ProcessEnv): Tree {
  const tree: Tree = {};
  for (const [name, key] of Object.entries(envKeys)) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    const schema = schemaAt(configSchema, key);
    let value: unknown = raw;
    if (schema?.type === 'integer') {
      if (!/^-?\d+$/.test(raw.trim()))
        throw new ConfigError(`config: ${key} (${name}) must be an integer; got "${raw}"`);
      value = Number(raw.trim());
    } else if (schema?.type === 'boolean') {
      if (!/^(true|false|1|0|yes|no)$/i.test(raw)) {
        throw new ConfigError(`config: ${key} (${name}) must be true or false; got "${raw}"`);
      }
      value = /^(true|1|yes)$/i.test(raw);
    }
    setAt(tree, key, value);
  }
  return tree;
}

function schemaAt(schema: TSchema, key: string): TSchema | undefined {
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
