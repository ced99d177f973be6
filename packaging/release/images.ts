import { execFileSync } from 'node:child_process';
import { cpSync, linkSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { agentImageDistName } from '../../agent/packaging/bundle';
import type { AgentArch } from './agent-artifacts';
import { BASE_IMAGES, ensureBaseImages } from './base-images';
import { agentContainerfile, agentDist, productVersion, serverContainerfile } from './layout';
import type { Podman } from './podman';
import { type Component, describeArtifact } from './sbom';

/** The images' names as `podman load` gives them back. */
export const serverImage = (version: string = productVersion) => `localhost/gatehouse-server:${version}`;
export const agentImage = (version: string = productVersion) => `localhost/gatehouse-agent:${version}`;

/**
 * `podman load -i` / `docker load -i` take these: docker-archive, which keeps HEALTHCHECK (the OCI format drops it),
 * uncompressed because Podman 4 loads no gzip'd archive.
 */
export const serverImageFile = (version: string = productVersion) =>
  `gatehouse-server-${version}-amd64.image.tar`;
export const agentImageFile = (version: string = productVersion) =>
  `gatehouse-agent-${version}-amd64.image.tar`;

/** A build context with just the named files (hard links: no copy of 100 MiB). */
function context(files: string[]): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-context-'));
  for (const file of files) {
    try {
      linkSync(file, path.join(dir, path.basename(file)));
    } catch {
      cpSync(file, path.join(dir, path.basename(file)));
    }
  }
  return dir;
}

async function build(
  podman: Podman,
  containerfile: string,
  files: string[],
  args: Record<string, string>,
  tag: string,
) {
  const dir = context(files);
  try {
    await podman(
      'build',
      '--format',
      'docker',
      '--network',
      'none',
      '--layers=false',
      '-f',
      containerfile,
      ...Object.entries(args).flatMap(([k, v]) => ['--build-arg', `${k}=${v}`]),
      '-t',
      tag,
      dir,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `podman save` as a docker-archive. */
async function save(podman: Podman, image: string, file: string): Promise<void> {
  rmSync(file, { force: true });
  await podman('save', '--format', 'docker-archive', '-o', file, image);
}

/** The agent image from packaging/agent/Containerfile and an executable, saved to `file`. */
export async function buildAgentImage(
  podman: Podman,
  executable: string,
  arch: AgentArch,
  file: string,
): Promise<void> {
  await ensureBaseImages(podman);
  await build(
    podman,
    agentContainerfile,
    [executable],
    { VERSION: productVersion, ARCH: arch, BASE_IMAGE: BASE_IMAGES.debian },
    agentImage(),
  );
  await save(podman, agentImage(), file);
}

/**
 * The agent image's copy that the server hands out for the console's Docker command
 * (`GET /agent/gatehouse-agent-image-linux-amd64.tar.gz`), gzip'd: a third of the size in the server's package and
 * image, and a device's `gunzip | docker load` (or podman load) takes it.
 */
export function serveAgentImage(file: string, agentBuild: string = agentDist): void {
  execFileSync('sh', [
    '-c',
    'gzip -1 -c "$0" > "$1"',
    file,
    path.join(agentBuild, agentImageDistName('amd64')),
  ]);
}

/** The agent image into the release folder, and its served copy into the release's agent build folder. */
export async function releaseAgentImage(
  podman: Podman,
  releaseDir: string,
  agent: Component[],
  agentBuild: string,
): Promise<string> {
  const bases = await ensureBaseImages(podman);
  const file = path.join(releaseDir, agentImageFile());
  await buildAgentImage(podman, path.join(releaseDir, 'gatehouse-agent-linux-amd64'), 'amd64', file);
  serveAgentImage(file, agentBuild);
  await describeArtifact(
    file,
    { name: 'gatehouse-agent', description: `Gatehouse agent image (${agentImage()}), linux/amd64` },
    [...bases.debian, ...agent],
  );
  return file;
}

/** The server image from ./Containerfile and the server's npm package in the release folder. */
export async function releaseServerImage(
  podman: Podman,
  releaseDir: string,
  server: Component[],
): Promise<string> {
  const bases = await ensureBaseImages(podman);
  await build(
    podman,
    serverContainerfile,
    [path.join(releaseDir, `gatehouse-${productVersion}.tgz`)],
    { VERSION: productVersion, NODE_IMAGE: BASE_IMAGES.node },
    serverImage(),
  );
  const file = path.join(releaseDir, serverImageFile());
  await save(podman, serverImage(), file);
  await describeArtifact(
    file,
    { name: 'gatehouse-server', description: `Gatehouse server image (${serverImage()}), linux/amd64` },
    [...bases.node, ...server],
  );
  return file;
}
