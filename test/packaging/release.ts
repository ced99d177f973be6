// The release every packaging test reads: `npm run release` once per run of the suite (its global setup), into the
// checkout's dist/release, with the console and docs reused when they are built (the e2e suite builds the docs).
// GATEHOUSE_RELEASE_REUSE=1 keeps a release already there (re-running one file while working on it).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { productVersion, releaseDir, repoRoot } from '../../packaging/release/layout';
import { podmanCli, podmanSettings } from '../../packaging/release/podman';

export const version = productVersion;
export const release = releaseDir();
export const artifact = (name: string) => path.join(release, name);

/** Podman as the docs' commands run it, in a store of the test's own, with a bridge network as podman's default. */
export function podmanFor(dir: string) {
  const env = podmanSettings(dir, 'bridge');
  return { env, podman: podmanCli(env, 300_000) };
}

export function buildRelease(): void {
  if (process.env.GATEHOUSE_RELEASE_REUSE === '1' && existsSync(path.join(release, 'release.json'))) return;
  execFileSync('npm', ['run', 'release', '--', '--reuse-builds'], {
    cwd: repoRoot,
    stdio: ['ignore', 'inherit', 'inherit'],
    timeout: 900_000,
  });
}
