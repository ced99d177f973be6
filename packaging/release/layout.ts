import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Every path the release reads from the checkout, in one place: where the server's sources, migrations, the built
 * console, the built docs and the agent's builds are. When one of them moves, this file is the one to change.
 */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The product version: the root package.json's, carried by every artifact. */
export const productVersion: string = (
  JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string }
).version;

/** Where `npm run release` leaves the artifacts (GATEHOUSE_RELEASE_DIR overrides it, e.g. for a test's own copy). */
export function releaseDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(env.GATEHOUSE_RELEASE_DIR || path.join(repoRoot, 'dist', 'release'));
}

/** Podman's store for the release's images and the base images' stand-ins, kept between runs. */
export function releasePodmanDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.GATEHOUSE_RELEASE_PODMAN_DIR || '/var/tmp/gatehouse-release-podman';
}

/**
 * What the server package carries, as paths relative to the checkout, copied as they are (the server runs its
 * TypeScript through tsx, so the sources are the program). Plugin folders leave out their console sources and keep
 * the console modules built from them.
 */
export const serverTree = {
  /** Folders copied whole. */
  folders: ['bin', 'core', 'server', 'config', 'protocol', 'agent'],
  /** Bundled plugins: the manifest folder without `web/`, then its built `web/dist`. */
  plugins: ['plugins/community', 'plugins/enterprise', 'plugins/cloud'],
  /** The console shell, built by `npm run build -w web`. */
  consoleDist: 'web/dist',
  /** The docs site, built by `npm run docs:build`, and the server that serves it as the public site is served. */
  docsBuild: 'docs/build',
  docsServer: ['docs/scripts/serve-site.mjs', 'docs/plugins/html-redirects/clean-path.mjs'],
  /** Files at the top. */
  files: ['README.md'],
} as const;

/** The workspace packages the server loads by name (`@gatehouse/core` ...), and their folders. */
export const workspaceLinks: Record<string, string> = {
  '@gatehouse/core': 'core',
  '@gatehouse/server': 'server',
  '@gatehouse/agent': 'agent',
  '@gatehouse/protocol': 'protocol',
  '@gatehouse/plugin-community': 'plugins/community',
  '@gatehouse/plugin-enterprise': 'plugins/enterprise',
  '@gatehouse/plugin-cloud': 'plugins/cloud',
};

/** Packages whose run-time dependencies the server package bundles (besides the workspaces' own). */
export const extraRuntimeRoots = ['tsx', 'compression', 'sirv'];

/** The agent's build output (agent/packaging/bundle.ts names the files). */
export const agentDist = path.join(repoRoot, 'agent', 'dist');

/** Files of the container images, the compose stack and the Kubernetes manifests. */
export const serverContainerfile = path.join(repoRoot, 'Containerfile');
export const agentContainerfile = path.join(repoRoot, 'packaging', 'agent', 'Containerfile');
export const composeFile = path.join(repoRoot, 'packaging', 'compose', 'compose.yaml');
export const kubernetesDir = path.join(repoRoot, 'packaging', 'kubernetes');
export const debianDir = path.join(repoRoot, 'packaging', 'debian');
