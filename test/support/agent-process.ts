import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const AGENT_MAIN = path.join(REPO, 'agent/main.ts');

/** A device agent's usual settings: where it dials, its namespace, its key and the identity it registers with. */
export interface DeviceAgentOptions {
  server: string;
  tenant: string;
  keyPath: string;
  identity: string;
  hostname: string;
  /** Seconds between availability calls; short in tests so acceptance shows quickly. */
  keepalive?: number;
  /** Further settings (environment variables), over the usual ones. */
  env?: Record<string, string>;
}

/** The single-user password of the agents `AgentProcess.device` starts. */
export const DEVICE_AGENT_PASSWORD = 'agent-secret';

/**
 * How to run the agent where a test or a benchmark needs it as installed: a built bundle under node with the given
 * options instead of agent/main.ts through tsx, from its install tree, and its output sent on (`stdout` to a file
 * descriptor or nowhere, `stderr` to this process or nowhere) instead of collected, so reading it costs a run nothing.
 */
export interface AgentLaunch {
  bundle?: { path: string; nodeArgs: readonly string[] };
  /** The single executable as install.sh lays it down (it needs no node), with its runtime directory. */
  executable?: { path: string; runtimeDir: string };
  /** The working directory (an install tree, so that nothing of the checkout is found); the repository else. */
  cwd?: string;
  output?: { stdout: number | 'ignore'; stderr: 'inherit' | 'ignore' };
}

/**
 * The real agent program as a child process, with its log lines collected: agent/main.ts through tsx, in the
 * repository (so its TypeScript settings apply), with only the environment it is given besides PATH and HOME.
 * Every test and benchmark that runs an agent starts it here (`AGENT_TEST_LOG=1` echoes its log).
 */
export class AgentProcess {
  readonly child: ChildProcess;
  readonly lines: string[] = [];
  private readonly lineWaiters: Array<{ pattern: RegExp; resolve: (line: string) => void }> = [];
  /** The exit code once it ended (null after a signal, or when it could not be started at all). */
  readonly exited: Promise<number | null>;

  constructor(env: Record<string, string>, args: string[] = [], launch: AgentLaunch = {}) {
    const program = launch.bundle
      ? [...launch.bundle.nodeArgs, launch.bundle.path]
      : ['--import', 'tsx', AGENT_MAIN];
    const [command, argv] = launch.executable
      ? [launch.executable.path, args]
      : [process.execPath, [...program, ...args]];
    const runtime = launch.executable ? { GATEHOUSE_AGENT_RUNTIME_DIR: launch.executable.runtimeDir } : {};
    this.child = spawn(command, argv, {
      cwd: launch.cwd ?? REPO,
      env: {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        HOME: process.env['HOME'] ?? '/root',
        ...runtime,
        ...env,
      },
      stdio: launch.output
        ? ['ignore', launch.output.stdout, launch.output.stderr]
        : ['ignore', 'pipe', 'pipe'],
    });
    let buffered = '';
    const onText = (text: string) => {
      buffered += text;
      const parts = buffered.split('\n');
      buffered = parts.pop() ?? '';
      for (const line of parts) {
        this.lines.push(line);
        if (process.env['AGENT_TEST_LOG']) process.stderr.write(`[agent] ${line}\n`);
        for (const waiter of [...this.lineWaiters]) {
          if (waiter.pattern.test(line)) {
            this.lineWaiters.splice(this.lineWaiters.indexOf(waiter), 1);
            waiter.resolve(line);
          }
        }
      }
    };
    this.child.stdout?.setEncoding('utf8').on('data', onText);
    this.child.stderr?.setEncoding('utf8').on('data', onText);
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code) => resolve(code));
      // A child that could not be spawned emits 'error' and never 'exit'.
      this.child.once('error', () => resolve(null));
    });
  }

  /** A device agent registering into `tenant` on `server` (a single-user agent, password `DEVICE_AGENT_PASSWORD`). */
  static device(opts: DeviceAgentOptions): AgentProcess {
    return new AgentProcess({
      GATEHOUSE_SERVER_ADDRESS: opts.server,
      GATEHOUSE_TENANT_ID: opts.tenant,
      GATEHOUSE_PRIVATE_KEY: opts.keyPath,
      GATEHOUSE_PREFERRED_IDENTITY: opts.identity,
      GATEHOUSE_PREFERRED_HOSTNAME: opts.hostname,
      GATEHOUSE_KEEPALIVE_INTERVAL: String(opts.keepalive ?? 1),
      GATEHOUSE_SINGLE_USER_PASSWORD: DEVICE_AGENT_PASSWORD,
      ...opts.env,
    });
  }

  /** Resolves with the first log line (past or future) matching `pattern`. */
  waitFor(pattern: RegExp, timeoutMs = 30_000): Promise<string> {
    const seen = this.lines.find((line) => pattern.test(line));
    if (seen) return Promise.resolve(seen);
    return this.waitForNext(pattern, timeoutMs);
  }

  /** Waits for a line after those already seen; fails with the log so far when none comes in time. */
  waitForNext(pattern: RegExp, timeoutMs = 30_000): Promise<string> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const index = this.lineWaiters.findIndex((waiter) => waiter.pattern === pattern);
        if (index !== -1) this.lineWaiters.splice(index, 1);
        reject(new Error(`the agent never logged ${pattern}; its log:\n${this.lines.join('\n')}`));
      }, timeoutMs);
      this.lineWaiters.push({
        pattern,
        resolve: (line) => {
          clearTimeout(timer);
          resolve(line);
        },
      });
    });
  }

  /** The device uid the agent logged once the server answered its registration. */
  async uid(): Promise<string> {
    const line = await this.waitFor(/\b[0-9a-f]{64}\b/);
    const uid = /\b([0-9a-f]{64})\b/.exec(line)?.[1];
    if (!uid) throw new Error(`no device uid in "${line}"`);
    return uid;
  }

  /** SIGTERM and wait for the exit (SIGKILL after 5 s, so a stuck agent cannot hold the suite). */
  async stop(): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGTERM');
      const killer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
      const code = await this.exited;
      clearTimeout(killer);
      return code;
    }
    return this.exited;
  }
}

/** Polls `check` until it returns a value other than undefined. */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  what: string,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}

/**
 * A real agent for `tenant` on `server`, accepted with `ownerToken` and online with its tunnel up: answers the agent
 * and the device's uid. Its key goes in `keyDir`.
 */
export async function onlineAgent(
  server: {
    url: string;
    api: (method: string, path: string, o?: { token?: string }) => Promise<{ status: number }>;
  },
  hub: { isOnline(uid: string): boolean },
  opts: { tenant: string; ownerToken: string; keyDir: string; identity: string; hostname: string },
): Promise<{ agent: AgentProcess; uid: string }> {
  const agent = AgentProcess.device({
    server: server.url,
    tenant: opts.tenant,
    keyPath: path.join(opts.keyDir, 'device.key'),
    identity: opts.identity,
    hostname: opts.hostname,
  });
  await agent.waitFor(/pending acceptance/);
  const uid = await agent.uid();
  // Run inside a container, the agent registers its host as a container (docker platform).
  const kind =
    (await server.api('GET', `/api/devices/${uid}`, { token: opts.ownerToken })).status === 200
      ? 'devices'
      : 'containers';
  await server.api('PATCH', `/api/${kind}/${uid}/accept`, { token: opts.ownerToken });
  await agent.waitFor(/online: device/);
  await eventually(async () => (hub.isOnline(uid) ? true : undefined), 'tunnel');
  return { agent, uid };
}
