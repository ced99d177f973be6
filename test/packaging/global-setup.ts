import { buildRelease } from './release';

/** The release, built once before the packaging tests (they run one file at a time: each uses podman or dpkg). */
export function mochaGlobalSetup(): void {
  buildRelease();
}
