import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export interface AgentOptions {
  server: string;
  tenant: string;
  keyPath: string;
  identity: string;
  hostname: string;
  /** Seconds between availability calls; short in tests so acceptance shows quickly. */
  keepalive?: number;
}

/** A real `gatehouse-agent` as a child process, with its log lines kept for assertions. */
export class AgentProcess {
  readonly lines: string[] = [];
  private readonly child: ChildProcess;
  private readonly waiters: { re: RegExp; resolve: (line: string) => void }[] = [];
  readonly exited: Promise<unknown>;

  constructor(opts: AgentOptions) {
    this.child = spawn(process.execPath, ['--import', 'tsx', path.join(repo, 'agent/main.ts')], {
      cwd: repo,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: process.env.HOME ?? '/tmp',
        GATEHOUSE_SERVER_ADDRESS: opts.server,
        GATEHOUSE_TENANT_ID: opts.tenant,
        GATEHOUSE_PRIVATE_KEY: opts.keyPath,
        GATEHOUSE_PREFERRED_IDENTITY: opts.identity,
        GATEHOUSE_PREFERRED_HOSTNAME: opts.hostname,
        GATEHOUSE_KEEPALIVE_INTERVAL: String(opts.keepalive ?? 1),
        GATEHOUSE_SINGLE_USER_PASSWORD: 'agent-secret',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.exited = once(this.child, 'exit');
    let buffered = '';
    const take = (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      let nl = buffered.indexOf('\n');
      while (nl !== -1) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        this.lines.push(line);
        if (process.env.TEST_AGENT_LOG) process.stderr.write(`[agent ${opts.hostname}] ${line}\n`);
        for (const w of [...this.waiters]) {
          if (w.re.test(line)) {
            this.waiters.splice(this.waiters.indexOf(w), 1);
            w.resolve(line);
          }
        }
        nl = buffered.indexOf('\n');
      }
    };
    this.child.stdout?.on('data', take);
    this.child.stderr?.on('data', take);
  }

  /** The first log line (already seen or still to come) matching `re`. */
  waitFor(re: RegExp, timeoutMs = 15_000): Promise<string> {
    const seen = this.lines.find((l) => re.test(l));
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`agent never logged ${re}; log:\n${this.lines.join('\n')}`));
      }, timeoutMs);
      this.waiters.push({
        re,
        resolve: (line) => {
          clearTimeout(timer);
          resolve(line);
        },
      });
    });
  }

  /** The device uid the agent logged after registering. */
  async uid(): Promise<string> {
    const line = await this.waitFor(/device [0-9a-f]{64}|\(([0-9a-f]{64})\)/);
    const m = /([0-9a-f]{64})/.exec(line);
    if (!m?.[1]) throw new Error(`no uid in ${line}`);
    return m[1];
  }

  /** SIGTERM and wait for a clean exit (SIGKILL after 5 s). */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGTERM');
    const killer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await this.exited;
    clearTimeout(killer);
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
  const agent = new AgentProcess({
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
