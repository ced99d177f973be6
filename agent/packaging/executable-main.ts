/**
 * The entry of the single-executable agent (`gatehouse-agent-linux-<arch>`, built by agent/build-executable.ts): the
 * Node.js runtime with the agent's install tree inside. It unpacks that tree once (the native addons must be files
 * to load), then runs the same bundle the tarball installs, so both behave alike.
 */
import { readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { getAsset, getRawAsset } from 'node:sea';
import { AGENT_VERSION } from '../version';
import { RUNTIME_ASSET, RUNTIME_DIGEST_ASSET, unpackRuntime } from './runtime-archive';

/**
 * Where the tree is unpacked: GATEHOUSE_AGENT_RUNTIME_DIR, else beside the device key of a root install
 * (/var/lib/gatehouse-agent, the unit's state directory), else the user's cache. Not /tmp: it is often mounted
 * noexec, and a native addon there cannot be loaded.
 */
export function runtimeBase(env: NodeJS.ProcessEnv, isRoot: boolean): string {
  if (env.GATEHOUSE_AGENT_RUNTIME_DIR) return env.GATEHOUSE_AGENT_RUNTIME_DIR;
  if (isRoot) return '/var/lib/gatehouse-agent/runtime';
  return join(env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache'), 'gatehouse-agent');
}

const UNPACKED = /^\d+\.\d+\.\d+[^/]*-[0-9a-f]{16}$/;

function start(): void {
  const base = runtimeBase(process.env, process.getuid?.() === 0);
  // The folder is named by the digest the build stored beside the tree: an unpacked copy is found without reading
  // (or copying into the heap) the 4 MiB tree itself, which is read in place only to unpack it.
  const folder = join(base, `${AGENT_VERSION}-${getAsset(RUNTIME_DIGEST_ASSET, 'utf8')}`);
  const blob = () => new Uint8Array(getRawAsset(RUNTIME_ASSET) as ArrayBuffer);
  try {
    unpackRuntime(blob, folder);
  } catch (error) {
    process.stderr.write(
      `gatehouse-agent: cannot unpack the agent's runtime into ${folder}: ${(error as Error).message}\n` +
        'Set GATEHOUSE_AGENT_RUNTIME_DIR to a writable folder on a file system that allows executables.\n',
    );
    process.exit(1);
  }
  // Trees of earlier versions are of no further use.
  for (const name of readdirSync(base)) {
    if (UNPACKED.test(name) && join(base, name) !== folder) {
      rmSync(join(base, name), { recursive: true, force: true });
    }
  }
  const bundle = join(folder, 'gatehouse-agent.mjs');
  createRequire(bundle)(bundle);
}

start();
