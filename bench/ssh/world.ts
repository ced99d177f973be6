import { type ChildProcess, spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ssh2 from 'ssh2';
import { AGENT_NODE_FLAGS } from '../../agent/node-flags';
import { AgentProcess } from '../../test/support/agent-process';
import { clientOptions, keyOptions } from '../../test/support/openssh';
import { ServerProcess } from '../../test/support/process-server';
import type { LoginAnswer } from '../../test/support/server';
import { benchAccount } from './account';

/** The agent as install.sh installs it: the built bundle, run by node in its own process. */
const AGENT_BUNDLE = path.resolve('agent/dist/gatehouse-agent/gatehouse-agent.mjs');
const DEVICE_PASSWORD = 'device-pass-1';

/**
 * The gateway as users run it, for the benchmarks: `gatehouse serve` in its own process (what `npm start` runs) on
 * PostgreSQL, and one agent from its built bundle in its own process, registered, accepted and online. With
 * `profileDir`, both run under V8's CPU profiler (cpu-profile.cjs) and write their profiles there when they stop.
 */
/** An agent to run: its bundle, and settings of its own (environment variables). */
export interface AgentSpec {
  bundle: string;
  env?: Record<string, string>;
}

/** One agent process and the device it registered. */
export interface BenchAgent {
  name: string;
  bundle: string;
  child: ChildProcess;
  exited: Promise<void>;
  uid: string;
}

export class ProcessWorld {
  readonly dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-bench-world-'));
  server!: ServerProcess;
  /** Further instances sharing the first server's installation (startSharingServer). */
  readonly others: ServerProcess[] = [];
  owner!: LoginAnswer;
  namespace!: string;
  readonly agents: BenchAgent[] = [];
  /** The device account sessions sign in as (./account.ts: not root, whose shell start-up can dwarf the paths). */
  readonly account = benchAccount();

  private constructor(private readonly profileDir: string | undefined) {}

  /**
   * `agents` names each device and the bundle its agent runs (by default one `bench-device` on this checkout's
   * bundle, built first), with settings of its own where given: a baseline bundle beside a candidate compares
   * agent changes within one run, and `GATEHOUSE_SESSION_PROTOCOL=off` the SSH upstream against the session one.
   */
  static async start(
    opts: { agents?: Record<string, string | AgentSpec>; profileDir?: string; build?: boolean } = {},
  ): Promise<ProcessWorld> {
    const world = new ProcessWorld(opts.profileDir);
    if (opts.build !== false) {
      // The bundle from this checkout's sources, as `npm run build -w agent` makes it for install.sh.
      const built = spawnSync('npm', ['run', 'build', '-w', 'agent'], { stdio: 'ignore' });
      if (built.status !== 0) throw new Error('the agent bundle did not build');
    }
    if (opts.profileDir) mkdirSync(opts.profileDir, { recursive: true });
    try {
      world.server = await ServerProcess.start(world.serverEnv('server'));
      world.owner = await world.server.setup();
      const ns = await world.api('GET', `/api/namespaces/${world.owner.tenant}`);
      world.namespace = ns.body.name as string;
      const wanted = Object.entries(opts.agents ?? { 'bench-device': AGENT_BUNDLE });
      for (const [i, [name, spec]] of wanted.entries()) {
        const { bundle, env } = typeof spec === 'string' ? { bundle: spec, env: {} } : spec;
        await world.startAgent(name, bundle, i, env);
      }
    } catch (error) {
      // A world that did not start leaves no server or agent behind: one outlived a failed run by an hour, and ran
      // beside every benchmark after it.
      await world.stop().catch(() => undefined);
      throw error;
    }
    return world;
  }

  /** The settings of a benchmark's `gatehouse serve`; `name` names its profile. */
  private serverEnv(name: string): Record<string, string> {
    return {
      GATEHOUSE_LOG_LEVEL: 'warn',
      // The limits the benchmark's sshd has (MaxStartups 200:30:300): 100 sign-ins at once from one address.
      GATEHOUSE_SSH_MAX_STARTUPS: '200:30:300',
      GATEHOUSE_SSH_PER_SOURCE_MAX_STARTUPS: '200',
      // sshd's LoginGraceTime: on a loaded machine 100 sign-ins at once take longer than the gateway's 30 s.
      GATEHOUSE_SSH_PREAUTH_TIMEOUT: '120',
      // V8 settings of the server's own, for experiments (`--trace-gc`, heap sizes), and its heap growth
      // (GATEHOUSE_HEAP_GROWING_PERCENT=0 compares with V8's own; core/heap.ts).
      ...this.nodeEnv(name, process.env.BENCH_SERVER_NODE_OPTIONS),
      ...(process.env.GATEHOUSE_HEAP_GROWING_PERCENT
        ? { GATEHOUSE_HEAP_GROWING_PERCENT: process.env.GATEHOUSE_HEAP_GROWING_PERCENT }
        : {}),
    };
  }

  /**
   * Another `gatehouse serve` of the same installation (scale-out, see docs/content/developers/architecture.md), in its own process: the
   * first server's PostgreSQL database, Redis key space and secret key, listeners of its own. The agents' tunnels
   * stay on the first server, so this one forwards to it over the internal listener. Needs TEST_DATABASE_URL and
   * TEST_REDIS_URL; stopped with the world (before the first server). Its profile is `server-<n>.cpuprofile`.
   */
  async startSharingServer(): Promise<ServerProcess> {
    const other = await ServerProcess.start(this.serverEnv(`server-${this.others.length + 2}`), {
      sharing: this.server,
    });
    this.others.push(other);
    return other;
  }

  /**
   * A process's Node settings: the profiler when the world has a profile directory (its profile is
   * `<name>.cpuprofile`), and `extra` options beside it.
   */
  private nodeEnv(name: string, extra: string | undefined): Record<string, string> {
    // NODE_OPTIONS refuses --cpu-prof: a preloaded script runs the same V8 profiler.
    const profiler = this.profileDir ? `--require ${path.resolve('bench/ssh/cpu-profile.cjs')}` : undefined;
    const options = [profiler, extra].filter(Boolean).join(' ');
    return {
      ...(options ? { NODE_OPTIONS: options } : {}),
      ...(this.profileDir ? { GATEHOUSE_CPU_PROFILE: path.join(this.profileDir, `${name}.cpuprofile`) } : {}),
    };
  }

  /** Starts an agent, and accepts its device once it registers; resolves when it is online. */
  private async startAgent(
    name: string,
    bundle: string,
    index: number,
    env: Record<string, string> = {},
  ): Promise<void> {
    // The node options every launcher passes (agent/node-flags.ts); BENCH_AGENT_NODE_ARGS replaces them, for
    // experiments ("" runs the agent without any).
    const nodeArgs = (process.env.BENCH_AGENT_NODE_ARGS ?? AGENT_NODE_FLAGS.join(' '))
      .split(' ')
      .filter(Boolean);
    // AGENT_BENCH_STDOUT=FILE appends each agent's standard output to FILE.<name> (V8's --trace-gc writes there).
    const stdout = process.env.AGENT_BENCH_STDOUT
      ? openSync(`${process.env.AGENT_BENCH_STDOUT}.${name}`, 'a')
      : 'ignore';
    let launched: AgentProcess;
    try {
      launched = new AgentProcess(
        {
          GATEHOUSE_SERVER_ADDRESS: this.server.url,
          GATEHOUSE_TENANT_ID: this.owner.tenant,
          GATEHOUSE_PRIVATE_KEY: path.join(this.dir, `${name}.key`),
          GATEHOUSE_PREFERRED_HOSTNAME: name,
          GATEHOUSE_PREFERRED_IDENTITY: `02:00:00:00:00:${(0x42 + index).toString(16)}`,
          // As install.sh installs it: as root, every session runs as the account it names (bench/ssh/account.ts).
          // Without root the agent can serve only its own user, which it requires a password for.
          ...(process.getuid?.() === 0 ? {} : { GATEHOUSE_SINGLE_USER_PASSWORD: DEVICE_PASSWORD }),
          // V8 settings of the agents' own, for experiments.
          ...this.nodeEnv(`agent-${name}`, process.env.BENCH_AGENT_NODE_OPTIONS),
          ...env,
        },
        [],
        {
          bundle: { path: bundle, nodeArgs },
          output: { stdout, stderr: process.env.AGENT_BENCH_LOG ? 'inherit' : 'ignore' },
        },
      );
    } finally {
      if (typeof stdout === 'number') closeSync(stdout);
    }
    const child = launched.child;
    // How the process ended: a child that could not be spawned emits 'error' and never 'exit'.
    const ended = new Promise<string>((resolve) => {
      child.once('exit', (code, signal) => resolve(`exited (${signal ?? code})`));
      child.once('error', (err) => resolve(`did not start (${err.message})`));
    });
    const agent: BenchAgent = { name, bundle, child, exited: ended.then(() => undefined), uid: '' };
    this.agents.push(agent);
    const died = ended.then((how): never => {
      throw new Error(`the agent of ${name} ${how} before it registered`);
    });
    agent.uid = await Promise.race([this.waitForDevice(name), died]);
    const accepted = await this.api('PATCH', `/api/devices/${agent.uid}/accept`);
    if (accepted.status !== 200) throw new Error(`accept answered ${accepted.status}`);
    for (let i = 0; i < 300; i++) {
      if ((await this.api('GET', `/api/devices/${agent.uid}`)).body.online) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`the agent of ${name} never came online`);
  }

  private async waitForDevice(name: string): Promise<string> {
    for (let i = 0; i < 300; i++) {
      const res = await this.api('GET', '/api/devices?status=pending&per_page=100');
      const list = (Array.isArray(res.body) ? res.body : (res.body?.items ?? [])) as {
        uid: string;
        name: string;
      }[];
      const found = list.find((d) => d.name === name);
      if (found) return found.uid;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`device ${name} never registered`);
  }

  api(method: string, p: string, body?: unknown) {
    return this.server.api(method, p, { token: this.owner.token, ...(body === undefined ? {} : { body }) });
  }

  get sshPort(): number {
    return this.server.sshPort;
  }

  /** `<user>@<namespace>.<device>`: the benchmark's account on the first agent's device unless named. */
  target(user = this.account, device = this.agents[0]?.name ?? ''): string {
    return `${user}@${this.namespace}.${device}`;
  }

  sshOptions(): string[] {
    return clientOptions({ knownHosts: path.join(this.dir, 'known_hosts'), connectTimeout: 60 });
  }

  /** What every benchmark client runs with: this world's options, the key only, quiet, no shared connection. */
  clientOptions(keyFile: string): string[] {
    return [
      ...this.sshOptions(),
      ...this.keyOptions(keyFile),
      '-o',
      'LogLevel=ERROR',
      '-o',
      'ControlPath=none',
    ];
  }

  keyOptions(keyFile: string): string[] {
    return keyOptions(keyFile);
  }

  /** A fresh Ed25519 key registered for every user and host of the namespace. */
  async keyForEveryHost(name: string): Promise<{ file: string; data: string }> {
    let pair = ssh2.utils.generateKeyPairSync('ed25519', { comment: name });
    while (ssh2.utils.parseKey(pair.private) instanceof Error) {
      pair = ssh2.utils.generateKeyPairSync('ed25519', { comment: name });
    }
    const file = path.join(this.dir, `${name}-key`);
    writeFileSync(file, pair.private, { mode: 0o600 });
    const data = Buffer.from(pair.public).toString('base64');
    const created = await this.api('POST', '/api/sshkeys/public-keys', {
      name,
      data,
      username: '.*',
      filter: { hostname: '.*' },
    });
    if (created.status !== 200) throw new Error(`registering ${name} answered ${created.status}`);
    return { file, data };
  }

  /** The server's and the agents' process ids (for CPU accounting). */
  get pids(): number[] {
    return [this.server.child?.pid ?? 0, ...this.agents.map((a) => a.child.pid ?? 0)];
  }

  /** Stops the agents and the servers (their profiles are written as they exit). */
  async stop(): Promise<void> {
    for (const a of this.agents) {
      if (a.child.exitCode === null && a.child.signalCode === null) a.child.kill('SIGTERM');
      // An agent stuck in its shutdown must not hold the run (nor, when start failed, hide why).
      const timer = setTimeout(() => a.child.kill('SIGKILL'), 10_000);
      await a.exited;
      clearTimeout(timer);
    }
    for (const other of this.others.splice(0)) await other.stop();
    await this.server?.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
