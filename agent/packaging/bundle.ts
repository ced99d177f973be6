import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where `npm run build -w agent` leaves what a device owner installs, and the names install.sh asks the server
 * for. The build writes these files and the server's `/agent/...` routes serve them, so both read them here.
 */
const agentDir = dirname(dirname(fileURLToPath(import.meta.url)));

/** The build's output folder. */
export const agentDistDir = join(agentDir, 'dist');

/** The installer, as shipped in the source tree (it needs no build). */
export const installScriptPath = join(agentDir, 'packaging', 'install.sh');

/** Architectures install.sh knows (its `uname -m` mapping) and the build can produce. */
export const BUNDLE_ARCHITECTURES = ['amd64', 'arm64'] as const;
export type BundleArchitecture = (typeof BUNDLE_ARCHITECTURES)[number];

/** `gatehouse-agent-linux-<arch>.tar.gz`, the file install.sh downloads from `$SERVER/agent/`. */
export function bundleFileName(arch: string): string {
  return `gatehouse-agent-linux-${arch}.tar.gz`;
}
