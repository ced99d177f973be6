import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Config, Installation } from '@gatehouse/core';
import { loadConfig as loadConfigOf, readConfig } from '@gatehouse/core/config/load';
import { AGENT_ASSETS } from '@gatehouse/protocol/distribution';

const root = new URL('../', import.meta.url);

/**
 * This repository as the kernel runs in it: the configuration in config/ (default.yaml and one file per edition),
 * the console shell built into web/dist, the three editions (the docs site renders the community and cloud API
 * documents), and the version of the root package.json.
 */
export const installation: Installation = {
  configDir: fileURLToPath(new URL('config', root)),
  editions: ['community', 'enterprise', 'cloud'],
  publishedEditions: ['community', 'cloud'],
  consoleDir: fileURLToPath(new URL('web/dist', root)),
  version: (JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { version: string }).version,
  // The agent's builds and files, which the community plugin hands out at /agent/ (their names are the protocol
  // package's).
  assets: {
    [AGENT_ASSETS.dist]: fileURLToPath(new URL('agent/dist', root)),
    [AGENT_ASSETS.installScript]: fileURLToPath(new URL('agent/packaging/install.sh', root)),
    [AGENT_ASSETS.service]: fileURLToPath(new URL('agent/packaging/gatehouse-agent.service', root)),
    [AGENT_ASSETS.openrc]: fileURLToPath(new URL('agent/packaging/gatehouse-agent.openrc', root)),
  },
};

/**
 * Core's settings as this installation reads them (its files, GATEHOUSE_CONFIG, the variables, then `overrides`),
 * for a configuration of core's keys alone: a plugin's section (such as `saml`) is refused here, since only a
 * kernel with that plugin knows it. A kernel (`createKernel`) reads both.
 */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Record<string, unknown> = {},
): Config {
  return loadConfigOf(installation, env, overrides);
}

/** Core's settings of the configuration, whatever plugin sections sit beside them (the kernel checks those). */
export function coreConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return readConfig(installation, env, {}).config;
}
