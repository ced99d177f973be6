import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where `npm run build -w agent` leaves what a device owner installs (the names are the protocol package's, which
 * the server shares). The host tells the server these paths (`Installation.assets`).
 */
const agentDir = dirname(dirname(fileURLToPath(import.meta.url)));

/** The build's output folder. */
export const agentDistDir = join(agentDir, 'dist');

/** The installer, as shipped in the source tree (it needs no build). */
export const installScriptPath = join(agentDir, 'packaging', 'install.sh');

/** The service files install.sh fetches for the device's init system (and the Debian package carries). */
export const serviceFilePaths = {
  service: join(agentDir, 'packaging', 'gatehouse-agent.service'),
  openrc: join(agentDir, 'packaging', 'gatehouse-agent.openrc'),
} as const;

export {
  agentImageDistName,
  BUNDLE_ARCHITECTURES,
  type BundleArchitecture,
  bundleFileName,
  executableFileName,
} from '@gatehouse/protocol/distribution';
