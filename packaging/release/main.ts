/**
 * `npm run release [-- --arch amd64,arm64] [--reuse-builds] [--no-images]`: every artifact of this version into one
 * folder (dist/release, or GATEHOUSE_RELEASE_DIR), each with `<file>.sha256` and a CycloneDX bill of materials
 * `<file>.cdx.json`, then SHA256SUMS and release.json listing them with their sizes:
 *
 *   gatehouse-<version>.tgz                         the server, `npm install -g` (console and docs inside)
 *   gatehouse-server-<version>-amd64.image.tar      the server image (`podman load -i`), from ./Containerfile
 *   gatehouse-agent-linux-<arch>                    the agent as one executable (no Node.js needed)
 *   gatehouse-agent-<version>-amd64.image.tar       the agent image, from packaging/agent/Containerfile
 *   gatehouse-agent_<version>_<arch>.deb            the agent as a Debian package
 *
 * Podman keeps its images (and the base images' stand-ins) in GATEHOUSE_RELEASE_PODMAN_DIR, default
 * /var/tmp/gatehouse-release-podman, so a later release reuses them.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { type AgentArch, agentComponents, buildAgentDeb, buildAgentExecutables } from './agent-artifacts';
import { releaseAgentImage, releaseServerImage } from './images';
import { productVersion, releaseDir, releasePodmanDir, repoRoot, serverTree } from './layout';
import { buildServerPackage, serverComponents } from './npm-package';
import { podmanCli, podmanSettings } from './podman';

const { values } = parseArgs({
  options: {
    arch: { type: 'string', default: 'amd64,arm64' },
    'reuse-builds': { type: 'boolean', default: false },
    'no-images': { type: 'boolean', default: false },
  },
  strict: true,
});
const arches = String(values.arch)
  .split(',')
  .map((a) => a.trim())
  .filter(Boolean) as AgentArch[];
for (const arch of arches) {
  if (arch !== 'amd64' && arch !== 'arm64') throw new Error(`--arch: amd64 or arm64, got "${arch}"`);
}

const started = performance.now();
const step = async <T>(name: string, work: () => Promise<T> | T): Promise<T> => {
  const t = performance.now();
  const result = await work();
  process.stdout.write(`release: ${name} (${((performance.now() - t) / 1000).toFixed(1)} s)\n`);
  return result;
};

const out = releaseDir();
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

const npmRun = (...args: string[]) =>
  execFileSync('npm', ['run', ...args], { cwd: repoRoot, stdio: 'inherit' });
await step('console', () => {
  if (!(values['reuse-builds'] && existsSync(path.join(repoRoot, serverTree.consoleDist, 'index.html')))) {
    npmRun('build', '-w', 'web');
  }
});
// This release's docs are kept as a version of their own (docs/scripts/version-docs.mjs) before the site is built.
await step('docs version', () => npmRun('docs:version'));
await step('docs', () => {
  if (!(values['reuse-builds'] && existsSync(path.join(repoRoot, serverTree.docsBuild, 'index.html')))) {
    npmRun('docs:build');
  }
});
// The agent is built into a folder of the release's own: agent/dist belongs to the checkout and to any server
// running from it (the test suites run beside a release).
const agentBuild = mkdtempSync(path.join(tmpdir(), 'gatehouse-release-agent-'));
process.on('exit', () => rmSync(agentBuild, { recursive: true, force: true }));
await step(`agent executables (${arches.join(', ')})`, () => buildAgentExecutables(out, arches, agentBuild));
const podman = podmanCli(podmanSettings(releasePodmanDir()));
const images = !values['no-images'] && arches.includes('amd64');
// Before the server package: the server hands the agent image out (the package carries the agent build).
if (images) await step('agent image', () => releaseAgentImage(podman, out, agentComponents(), agentBuild));
const server = await step('server npm package', () => buildServerPackage(out, agentBuild));
for (const arch of arches) await step(`agent Debian package (${arch})`, () => buildAgentDeb(out, arch));
if (images) {
  await step('server image', () => releaseServerImage(podman, out, serverComponents(server.packages)));
  await podman('image', 'prune', '--force');
}

const artifacts = readdirSync(out)
  .filter((name) => !/\.(sha256|cdx\.json)$/.test(name))
  .sort()
  .map((name) => ({
    name,
    bytes: statSync(path.join(out, name)).size,
    sha256: `${name}.sha256`,
    sbom: `${name}.cdx.json`,
  }));
writeFileSync(
  path.join(out, 'SHA256SUMS'),
  execFileSync(
    'sha256sum',
    artifacts.map((a) => a.name),
    { cwd: out, encoding: 'utf8' },
  ),
);
writeFileSync(
  path.join(out, 'release.json'),
  `${JSON.stringify({ version: productVersion, artifacts }, null, 2)}\n`,
);
for (const a of artifacts) {
  process.stdout.write(`  ${a.name.padEnd(48)} ${(a.bytes / 1048576).toFixed(1).padStart(7)} MiB\n`);
}
process.stdout.write(
  `release ${productVersion} in ${out} (${((performance.now() - started) / 1000).toFixed(0)} s)\n`,
);
