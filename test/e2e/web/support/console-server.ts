import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { dropDatabase, migratedDatabase } from '../../../support/server';

const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));

/**
 * The real `gatehouse serve`, started as a person would start it, serving the built console. The store is a
 * fresh database on TEST_DATABASE_URL's PostgreSQL when that is set, else the embedded store in a temp dir.
 */
export interface ConsoleServer {
  url: string;
  sshPort: number;
  /** The first-run link the server printed ("<url>/setup?sign=..."). */
  setupUrl: string;
  output: () => string;
  /** The server's PostgreSQL database, when it runs on one (TEST_DATABASE_URL set), for a test to age rows. */
  databaseUrl: string | undefined;
  /** Runs `gatehouse <args>` against the same store and configuration (through the running server's local socket). */
  cli: (...args: string[]) => string;
  stop: () => Promise<void>;
  /** Its data directory, the Redis key prefix it shares with other instances (`shared`), if any. */
  dataDir: string;
  redisPrefix: string | undefined;
}

/** Whether the servers of a test can be instances of one installation: PostgreSQL and Redis to share. */
export const canShare = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL);

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/**
 * Builds the console (web/dist) and the bundled plugins' console modules (plugins/<name>/web/dist) once when they are
 * missing, with the root `npm run build`, which runs each package's own build (README's set-up runs it through the
 * root `prepare`).
 */
export function ensureConsoleBuilt(): void {
  const built = [
    path.join(repoRoot, 'web', 'dist', 'index.html'),
    ...['community', 'enterprise', 'cloud'].map((p) =>
      path.join(repoRoot, 'plugins', p, 'web', 'dist', 'index.js'),
    ),
  ];
  if (built.every((file) => existsSync(file)) && process.env.GATEHOUSE_E2E_REBUILD !== '1') return;
  const result = spawnSync('npm', ['run', 'build'], { cwd: repoRoot, encoding: 'utf8' });
  if (result.status !== 0)
    throw new Error(`building the console failed:\n${result.stdout}\n${result.stderr}`);
}

/**
 * `shared`: the server keeps its counters and messages in TEST_REDIS_URL's Redis, so that other instances may join
 * it. `sharing`: another instance of that installation (its database, Redis key space and secret key), with
 * listeners of its own; it has no first-run link, and leaves the database to the first.
 */
export async function startConsoleServer(
  options: { edition?: string; env?: Record<string, string>; shared?: boolean; sharing?: ConsoleServer } = {},
): Promise<ConsoleServer> {
  ensureConsoleBuilt();
  const { sharing } = options;
  if ((options.shared || sharing) && !canShare)
    throw new Error('instances share PostgreSQL and Redis: set TEST_DATABASE_URL and TEST_REDIS_URL');
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gatehouse-web-'));
  const databaseUrl = sharing ? sharing.databaseUrl : await migratedDatabase();
  const redisPrefix =
    sharing?.redisPrefix ??
    (options.shared ? `gatehouse-web-${Math.random().toString(16).slice(2, 10)}:` : undefined);
  const httpPort = await freePort();
  const sshPort = await freePort();
  const url = `http://127.0.0.1:${httpPort}`;
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    GATEHOUSE_EDITION: options.edition ?? 'community',
    GATEHOUSE_DATA_DIR: dataDir,
    GATEHOUSE_HTTP_HOST: '127.0.0.1',
    GATEHOUSE_HTTP_PORT: String(httpPort),
    GATEHOUSE_SSH_HOST: '127.0.0.1',
    GATEHOUSE_SSH_PORT: String(sshPort),
    GATEHOUSE_PUBLIC_URL: url,
    GATEHOUSE_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
    GATEHOUSE_LOG_PRETTY: 'false',
    ...(databaseUrl ? { GATEHOUSE_DATABASE_URL: databaseUrl } : {}),
    ...(redisPrefix
      ? { GATEHOUSE_REDIS_URL: process.env.TEST_REDIS_URL as string, GATEHOUSE_REDIS_PREFIX: redisPrefix }
      : {}),
    // One installation has one secret key: a joining instance reads the first one's key file.
    ...(sharing ? { GATEHOUSE_SECRET_KEY_FILE: path.join(sharing.dataDir, 'secret.key') } : {}),
    ...options.env,
  };
  const child: ChildProcess = spawn(process.execPath, [path.join(repoRoot, 'bin', 'gatehouse.js'), 'serve'], {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });

  const cleanup = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    if (!sharing) await dropDatabase(databaseUrl);
    rmSync(dataDir, { recursive: true, force: true });
  };

  const setupUrl = await (sharing
    ? answering(url, child, () => output)
    : new Promise<string>((resolve, reject) => {
        const deadline = setTimeout(() => {
          reject(new Error(`gatehouse serve printed no setup link within 60 s:\n${output}`));
        }, 60_000);
        const check = () => {
          const match = /(http:\/\/\S+\/setup\?sign=\S+)/.exec(output);
          if (match?.[1]) {
            clearTimeout(deadline);
            child.stdout?.off('data', check);
            resolve(match[1]);
          }
        };
        child.stdout?.on('data', check);
        child.once('exit', (code) => {
          clearTimeout(deadline);
          reject(new Error(`gatehouse serve exited with ${code}:\n${output}`));
        });
      })
  ).catch(async (error: unknown) => {
    await cleanup();
    throw error;
  });

  const cli = (...args: string[]) => {
    const result = spawnSync(process.execPath, [path.join(repoRoot, 'bin', 'gatehouse.js'), ...args], {
      cwd: repoRoot,
      env,
      encoding: 'utf8',
      timeout: 60_000,
    });
    if (result.status !== 0)
      throw new Error(`gatehouse ${args.join(' ')} failed:\n${result.stdout}\n${result.stderr}`);
    return result.stdout;
  };

  return {
    url,
    sshPort,
    setupUrl,
    output: () => output,
    databaseUrl,
    cli,
    stop: cleanup,
    dataDir,
    redisPrefix,
  };
}

/** Waits until a joining instance answers `GET /info` (it prints no first-run link): resolves with an empty link. */
async function answering(url: string, child: ChildProcess, output: () => string): Promise<string> {
  const until = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`gatehouse serve exited with ${child.exitCode}:\n${output()}`);
    const status = await fetch(`${url}/info`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) return '';
    if (Date.now() > until) throw new Error(`gatehouse serve did not answer within 60 s:\n${output()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export function axeSource(): string {
  return readFileSync(path.join(repoRoot, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
}
