/**
 * A Gatehouse server of a given checkout in its own process (`node <checkout>/bin/gatehouse.js serve`), as the store
 * benchmarks (`models.ts`, `request-floor.ts`) run one per checkout, and its first user signed in.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freshDatabase } from '../../test/support/server';

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts a server of `checkout`; resolves with it and the milliseconds until its first `/info` answer. */
export async function startCheckout(
  checkout: string,
  env: NodeJS.ProcessEnv,
  url: string,
  nodeArgs: string[] = [],
): Promise<{ child: ChildProcess; ms: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, [...nodeArgs, path.join(checkout, 'bin/gatehouse.js'), 'serve'], {
    cwd: checkout,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (;;) {
    try {
      if ((await fetch(`${url}/info`)).ok) return { child, ms: performance.now() - started };
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null) throw new Error(`server of ${checkout} exited during boot`);
    if (performance.now() - started > 120_000) throw new Error('no /info answer within 120 s');
    await sleep(10);
  }
}

export async function stopCheckout(child: ChildProcess): Promise<void> {
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

/** First-run setup through the CLI's setup link, then the sign-in of that user: its token and namespace. */
export async function signUp(
  checkout: string,
  env: NodeJS.ProcessEnv,
  url: string,
): Promise<{ token: string; tenant: string }> {
  const setup = spawn(process.execPath, [path.join(checkout, 'bin/gatehouse.js'), 'setup-url'], {
    cwd: checkout,
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let setupOut = '';
  setup.stdout?.on('data', (c: Buffer) => {
    setupOut += c.toString();
  });
  await once(setup, 'exit');
  const sign = new URL(setupOut.trim()).searchParams.get('sign');
  const post = async (p: string, body: unknown) => {
    const res = await fetch(url + p, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${p} answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as Record<string, unknown>;
  };
  const user = { name: 'Bench', username: 'bench', email: 'bench@example.com', password: 'bench-pass' };
  await post(`/api/setup?sign=${sign}`, user);
  const login = await post('/api/login', { username: 'bench', password: 'bench-pass' });
  return { token: login.token as string, tenant: login.tenant as string };
}

/**
 * Where one checkout's server runs in a benchmark: a fresh PostgreSQL database, a data folder, free ports, and the
 * environment that points the server at them (`extra` adds or overrides variables).
 */
export async function serverPlace(
  prefix: string,
  extra: NodeJS.ProcessEnv = {},
): Promise<{ databaseUrl: string; dataDir: string; url: string; env: NodeJS.ProcessEnv }> {
  const databaseUrl = await freshDatabase();
  if (!databaseUrl) throw new Error('set TEST_DATABASE_URL: the figures are for PostgreSQL');
  const dataDir = mkdtempSync(path.join(tmpdir(), prefix));
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    GATEHOUSE_DATABASE_URL: databaseUrl,
    GATEHOUSE_DATA_DIR: dataDir,
    GATEHOUSE_HTTP_PORT: String(port),
    GATEHOUSE_SSH_PORT: String(await freePort()),
    GATEHOUSE_LOG_LEVEL: 'warn',
    ...extra,
  };
  return { databaseUrl, dataDir, url: `http://127.0.0.1:${port}`, env };
}
