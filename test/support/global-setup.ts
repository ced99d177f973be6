import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ensureConsoleBuilt } from '../e2e/web/support/console-server';

const agentDir = fileURLToPath(new URL('../../agent/', import.meta.url));

/**
 * Builds what several test files read, once, before any of them runs. Mocha runs a `--require`d file's
 * `mochaGlobalSetup` in its main process, in parallel mode before the first worker starts, so two files never
 * build into one folder at once (the suites run with `--parallel`).
 */
export function buildShared(): void {
  // The agent bundle the server hands out (install.sh and the tarball): always this checkout's agent. It takes
  // under a second.
  execFileSync(process.execPath, ['--import', 'tsx', 'build.ts'], { cwd: agentDir, stdio: 'ignore' });
  // And the single executable install.sh downloads, for this machine's architecture (about 6 s).
  execFileSync(process.execPath, ['--import', 'tsx', 'build-executable.ts'], {
    cwd: agentDir,
    stdio: 'ignore',
  });
  // The console and the bundled plugins' modules, when missing (README's set-up builds them through `prepare`).
  ensureConsoleBuilt();
}

export function mochaGlobalSetup(): void {
  buildShared();
}
