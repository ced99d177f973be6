// The agent image the server hands out (agent/dist/gatehouse-agent-image-linux-amd64.tar.gz), built from this
// checkout's executable when `npm run release` has not left one, in the release's podman store (its base image's
// stand-in is kept there).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { agentDistDir, agentImageDistName, executableFileName } from '../../agent/packaging/bundle';
import { buildAgentImage, serveAgentImage } from '../../packaging/release/images';
import { releasePodmanDir } from '../../packaging/release/layout';
import { podmanCli, podmanSettings } from '../../packaging/release/podman';

export async function ensureAgentImageServed(): Promise<void> {
  if (existsSync(path.join(agentDistDir, agentImageDistName('amd64')))) return;
  const podman = podmanCli(podmanSettings(releasePodmanDir()));
  const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-agent-image-'));
  try {
    const file = path.join(dir, 'agent.image.tar');
    await buildAgentImage(podman, path.join(agentDistDir, executableFileName('amd64')), 'amd64', file);
    serveAgentImage(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
