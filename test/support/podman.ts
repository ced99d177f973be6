// A real container engine for the connector tests: Debian's podman serving the Docker-compatible API on a loopback
// TCP port, with its own configuration and storage in a temporary directory (nothing of the machine's podman set-up
// is used or touched). No image can be pulled here, so the one image is imported from a root file system made of
// the host's static busybox, with accounts whose passwords the tests know.
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { podmanSettings } from '../../packaging/release/podman';

const run = promisify(execFile);

/** The image every test container runs: busybox, `root` and `alice` with the passwords below. */
export const TEST_IMAGE = 'localhost/gatehouse-connector-test:1';
export const CONTAINER_ACCOUNTS = { root: 'root-pass-1', alice: 'alice-pass-1' };

export interface PodmanEngine {
  address: string;
  port: number;
  /** Runs the podman command line against this engine's store (what someone on the engine's host would type). */
  podman(...args: string[]): Promise<string>;
  /** Starts a container of the test image that sleeps until stopped; answers its id. */
  runContainer(name: string): Promise<string>;
  /** Stops the API service and starts it again on the same port (the containers keep running). */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** Why podman cannot run here, or undefined when it can (the tools that `npm test`'s pretest installs). */
export function podmanMissing(): string | undefined {
  for (const tool of ['/usr/bin/podman', '/usr/sbin/runc', '/bin/busybox', '/usr/bin/mkpasswd']) {
    if (!existsSync(tool)) return `${tool} is not installed (scripts/test-tools.mjs installs it)`;
  }
  if (process.getuid?.() !== 0) return 'podman runs rootful here: the tests need root';
  return undefined;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A root file system of busybox and two accounts, as a tar for `podman import`. */
function buildRootfs(dir: string): string {
  const root = path.join(dir, 'rootfs');
  for (const sub of ['bin', 'etc', 'root', 'home/alice', 'tmp'])
    mkdirSync(path.join(root, sub), { recursive: true });
  execFileSync('cp', ['/bin/busybox', path.join(root, 'bin/busybox')]);
  const applets = execFileSync('/bin/busybox', ['--list'], { encoding: 'utf8' }).split('\n').filter(Boolean);
  for (const applet of applets) {
    if (applet !== 'busybox') symlinkSync('busybox', path.join(root, 'bin', applet));
  }
  const hash = (password: string) =>
    execFileSync('/usr/bin/mkpasswd', ['-m', 'sha-512', password], { encoding: 'utf8' }).trim();
  writeFileSync(
    path.join(root, 'etc/passwd'),
    'root:x:0:0:root:/root:/bin/sh\nalice:x:1000:1000:Alice:/home/alice:/bin/sh\n',
  );
  writeFileSync(path.join(root, 'etc/group'), 'root:x:0:\nalice:x:1000:\n');
  writeFileSync(
    path.join(root, 'etc/shadow'),
    `root:${hash(CONTAINER_ACCOUNTS.root)}:19000:0:99999:7:::\nalice:${hash(CONTAINER_ACCOUNTS.alice)}:19000:0:99999:7:::\n`,
  );
  chmodSync(path.join(root, 'etc/shadow'), 0o600);
  chmodSync(path.join(root, 'tmp'), 0o1777);
  execFileSync('chown', ['-R', '1000:1000', path.join(root, 'home/alice')]);
  const tar = path.join(dir, 'rootfs.tar');
  execFileSync('tar', ['-C', root, '-cf', tar, '.']);
  return tar;
}

/** `podman system service` on the port, once it answers. */
async function serve(env: NodeJS.ProcessEnv, port: number, dir: string): Promise<{ stop(): Promise<void> }> {
  const service: ChildProcess = spawn(
    '/usr/bin/podman',
    ['system', 'service', '--time=0', `tcp:127.0.0.1:${port}`],
    {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let log = '';
  service.stderr?.setEncoding('utf8').on('data', (t: string) => {
    log = (log + t).slice(-8192);
  });
  const exited = new Promise<void>((resolve) => service.once('exit', () => resolve()));
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/_ping`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (service.exitCode !== null || Date.now() > deadline) {
      service.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`podman system service did not start:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    async stop() {
      if (service.exitCode === null) service.kill('SIGTERM');
      await exited;
    },
  };
}

/** Kills every process whose command line names `dir` (conmon and podman's cleanup processes of this engine). */
function endProcessesUsing(dir: string): void {
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir)) process.kill(Number(pid), 'SIGKILL');
    } catch {
      // gone already, or not ours to read
    }
  }
}

/** Detaches every mount at or below `dir`, deepest first (the overlay's own and the containers' root file systems). */
function unmountUnder(dir: string): void {
  const points = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((point): point is string => !!point && (point === dir || point.startsWith(`${dir}/`)))
    .sort((a, b) => b.length - a.length);
  for (const point of points) {
    try {
      execFileSync('/usr/bin/umount', ['--lazy', point], { stdio: 'ignore' });
    } catch {
      // unmounted with its parent already
    }
  }
}

/** Starts a podman engine of its own; `close` stops it and removes everything it made. */
export async function startPodman(): Promise<PodmanEngine> {
  const missing = podmanMissing();
  if (missing) throw new Error(`podman cannot run: ${missing}`);
  const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-podman-'));
  // The settings that work on these machines (packaging/release/podman.ts), no network namespace set-up.
  const env = { ...process.env, ...podmanSettings(dir) };
  const podman = async (...args: string[]) => {
    const { stdout } = await run('/usr/bin/podman', args, {
      env,
      timeout: 60_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    return stdout.trim();
  };
  await podman('import', buildRootfs(dir), TEST_IMAGE);
  const port = await freePort();
  let service = await serve(env, port, dir);
  return {
    address: '127.0.0.1',
    port,
    podman,
    runContainer: (name) =>
      podman('run', '-d', '--name', name, '--hostname', name, TEST_IMAGE, '/bin/sleep', '100000'),
    async restart() {
      await service.stop();
      service = await serve(env, port, dir);
    },
    async close() {
      await service.stop();
      // Removes the containers, images and the storage's own mounts, then the directory.
      await podman('system', 'reset', '--force').catch(() => undefined);
      // On a loaded machine the reset can give up early and leave a container's conmon running with the overlay
      // still mounted under the directory (EBUSY on rmdir). Those processes and mounts are this engine's own.
      endProcessesUsing(dir);
      unmountUnder(dir);
      // A container's conmon and cleanup process may still write their exit files for a moment (ENOTEMPTY).
      rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
    },
  };
}
