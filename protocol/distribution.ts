/**
 * The names under which a server hands out the agent (`$SERVER/agent/<name>`): what install.sh, the console's
 * commands and the agent's build agree on. The files themselves are the agent's build output, which the host tells
 * the server where to find.
 */

/** Architectures install.sh knows (its `uname -m` mapping) and the build can produce. */
export const BUNDLE_ARCHITECTURES = ['amd64', 'arm64'] as const;
export type BundleArchitecture = (typeof BUNDLE_ARCHITECTURES)[number];

/** `gatehouse-agent-linux-<arch>.tar.gz`: the agent for a device's own Node.js. */
export function bundleFileName(arch: string): string {
  return `gatehouse-agent-linux-${arch}.tar.gz`;
}

/** `gatehouse-agent-linux-<arch>`: the single executable, which needs no Node.js. */
export function executableFileName(arch: string): string {
  return `gatehouse-agent-linux-${arch}`;
}

/** The agent image as the release leaves it for the server (gzip'd docker-archive), for the console's Docker command. */
export function agentImageDistName(arch: string): string {
  return `gatehouse-agent-image-linux-${arch}.tar.gz`;
}

/**
 * The names the host gives the server's agent files by (`Installation.assets`): the build's output folder, the
 * installer, and the service file of each init system.
 */
export const AGENT_ASSETS = {
  dist: 'agent-dist',
  installScript: 'agent-install-script',
  service: 'agent-service-systemd',
  openrc: 'agent-service-openrc',
} as const;
