/**
 * Many agents on one server. Starts `gatehouse serve` on a fresh PostgreSQL database (TEST_DATABASE_URL's server),
 * registers N agents through the real agent protocol (`POST /api/devices/auth`), accepts them, connects each one's
 * tunnel (`/agent/connection`, the real multiplexer's agent end answering the server's pings), repeats the auth call
 * every 30 s with a random phase as agents do, then restarts the server and times the agents' return (agents
 * reconnect with the agent's own jittered backoff).
 *
 * Reports server RSS per agent, server CPU while idle, auth-call latency (p50/p99), and the time until all agents are
 * back online after the restart.
 *
 * Usage: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node --import tsx bench/agents/load.ts [agents]
 *        [steady-seconds] [--procs 1] [--profile server.cpuprofile]
 *
 * The agents run in `--procs` processes of this script (`--worker`, driven over IPC), each with its share. One
 * process holding 10,000 WebSockets stalls in its own garbage collector, and every answer that arrives meanwhile
 * waits; several processes stall less each but cost more CPU in all. On a machine of 2 cores, shared with the server
 * and PostgreSQL, one process gave the lower p99 (bench/RESULTS.md), so that is the default.
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { backoffDelayMs } from '@gatehouse/agent/device-agent';
import { AGENT_VERSION } from '@gatehouse/agent/version';
import { type ProofSubject, proofHeaders } from '@gatehouse/protocol/agent-proof';
import { type MuxSession, serveTunnel, TUNNEL_MAX_MESSAGE } from '@gatehouse/protocol/mux';
import { WebSocket } from 'ws';
import { openFilesLimit } from '../../core/http/open-files';
import { dropDatabase, freshDatabase } from '../../test/support/server';
import { dropJsonFlag, writeFigures } from '../figures';

const args = process.argv.slice(2);
const profileAt = args.indexOf('--profile');
const PROFILE_FILE = profileAt < 0 ? undefined : args.splice(profileAt, 2)[1];
dropJsonFlag(args);
const procsAt = args.indexOf('--procs');
const PROCS = procsAt < 0 ? 1 : Number(args.splice(procsAt, 2)[1]);
const WORKER = args.includes('--worker');
const N = Number(args[0] ?? 2000);
const STEADY_SECONDS = Number(args[1] ?? 60);
const INTERVAL_MS = 30_000;
const bin = path.resolve('bin/gatehouse.js');

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function procStat(pid: number): { rssKiB: number; cpuTicks: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKiB = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  // utime and stime are fields 14 and 15 of /proc/<pid>/stat, i.e. 11 and 12 after the command name.
  const cpuTicks = Number(fields[11]) + Number(fields[12]);
  return { rssKiB, cpuTicks };
}
const TICKS_PER_SECOND = 100;

/** How many files (sockets included) process `pid` has open; 0 once it is gone. */
function openFiles(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return 0;
  }
}
/** The public port serves /metrics only with this bearer token (metrics.token), as for a scraper outside the host. */
const METRICS_TOKEN = randomBytes(16).toString('hex');

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

/** Cumulative server-side duration buckets of the auth route, from the server's own /metrics. */
async function authBuckets(url: string): Promise<Map<string, number>> {
  const text = await (
    await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
  ).text();
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('gatehouse_http_request_duration_seconds_bucket{')) continue;
    if (!line.includes('route="/api/devices/auth"')) continue;
    const le = /le="([^"]+)"/.exec(line)?.[1];
    if (le) out.set(le, Number(line.split(' ').pop()));
  }
  return out;
}

/** The smallest bucket bound holding p percent of the calls between two scrapes (an upper bound of the pXX). */
function bucketPercentile(before: Map<string, number>, after: Map<string, number>, p: number): string {
  const deltas = [...after].map(([le, n]) => [le, n - (before.get(le) ?? 0)] as const);
  const total = deltas.find(([le]) => le === '+Inf')?.[1] ?? 0;
  const hit = deltas.find(([, n]) => n >= (p / 100) * total);
  return hit ? (hit[0] === '+Inf' ? '> 2.5 s' : `<= ${Number(hit[0]) * 1000} ms`) : 'n/a';
}

interface ServerProc {
  child: ChildProcess;
  url: string;
  exited: Promise<unknown>;
  inspectPort: number;
}

/** A session with the server's inspector (it runs with `--inspect` on loopback): one call at a time. */
async function inspector(inspectPort: number) {
  const [target] = (await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json()) as {
    webSocketDebuggerUrl: string;
  }[];
  if (!target) throw new Error('no inspector target');
  const ws = new WebSocket(target.webSocketDebuggerUrl, { maxPayload: 1 << 30 });
  await once(ws, 'open');
  let id = 0;
  const call = <R = { result?: { value?: string } }>(method: string, params: Record<string, unknown> = {}) =>
    new Promise<R>((resolve) => {
      const mine = ++id;
      const onMessage = (data: Buffer) => {
        const msg = JSON.parse(data.toString()) as { id?: number; result: R };
        if (msg.id !== mine) return;
        ws.off('message', onMessage);
        resolve(msg.result);
      };
      ws.on('message', onMessage);
      ws.send(JSON.stringify({ id: mine, method, params }));
    });
  return { call, close: () => ws.close() };
}

/**
 * The server's own view of its memory after a full garbage collection, through the inspector protocol: RSS alone
 * swings by tens of MiB with the collector's timing, which would drown a per-agent figure.
 */
async function serverMemory(
  inspectPort: number,
): Promise<{ rss: number; heapUsed: number; external: number }> {
  const session = await inspector(inspectPort);
  await session.call('HeapProfiler.enable');
  await session.call('HeapProfiler.collectGarbage');
  await session.call('HeapProfiler.collectGarbage');
  const answer = await session.call('Runtime.evaluate', {
    expression: 'JSON.stringify(process.memoryUsage())',
  });
  session.close();
  return JSON.parse(answer.result?.value ?? '{}');
}

/**
 * The server's event-loop delay over a window (perf_hooks' histogram, started and read through the inspector): a
 * slow call whose server spent it waiting on its own loop shows here, one that waited on the store does not.
 */
async function startLoopDelay(
  inspectPort: number,
): Promise<() => Promise<{ p50: number; p99: number; max: number }>> {
  const session = await inspector(inspectPort);
  await session.call('Runtime.evaluate', {
    expression: `globalThis.__benchLoop = process.getBuiltinModule('node:perf_hooks').monitorEventLoopDelay({ resolution: 5 });
      globalThis.__benchLoop.enable(); 'ok'`,
  });
  return async () => {
    const answer = await session.call('Runtime.evaluate', {
      expression: `(() => { const h = globalThis.__benchLoop; h.disable();
        return JSON.stringify({ p50: h.percentile(50) / 1e6, p99: h.percentile(99) / 1e6, max: h.max / 1e6 }); })()`,
    });
    session.close();
    return JSON.parse(answer.result?.value ?? '{}');
  };
}

/**
 * `--profile <file>`: a CPU profile of the server over the steady window, written as a `.cpuprofile`
 * (`npx tsx bench/ssh/profile-summary.ts <file>` reads it); the restarted server then runs with `--cpu-prof`, which
 * writes its whole life's profile (CPU.<date>...cpuprofile) beside that file when it stops.
 */
async function startProfile(inspectPort: number): Promise<() => Promise<unknown>> {
  const session = await inspector(inspectPort);
  await session.call('Profiler.enable');
  await session.call('Profiler.setSamplingInterval', { interval: 1000 });
  await session.call('Profiler.start');
  return async () => {
    const { profile } = await session.call<{ profile: unknown }>('Profiler.stop');
    session.close();
    return profile;
  };
}

async function startServer(
  env: NodeJS.ProcessEnv,
  port: number,
  nodeArgs: string[] = [],
): Promise<ServerProc> {
  const inspectPort = await freePort();
  const child = spawn(process.execPath, [`--inspect=127.0.0.1:${inspectPort}`, ...nodeArgs, bin, 'serve'], {
    env: {
      ...env,
      GATEHOUSE_HTTP_PORT: String(port),
      // V8 settings of the server's own, for experiments (heap sizes), as in bench/ssh/world.ts.
      ...(process.env.BENCH_SERVER_NODE_OPTIONS
        ? { NODE_OPTIONS: process.env.BENCH_SERVER_NODE_OPTIONS }
        : {}),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = once(child, 'exit');
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    try {
      if ((await fetch(`${url}/info`)).ok) break;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null) throw new Error('server exited during boot');
    await sleep(25);
  }
  return { child, url, exited, inspectPort };
}

class LoadAgent {
  uid = '';
  token = '';
  session: MuxSession | undefined;
  online = false;
  private attempt = 0;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;

  /**
   * The device key (Ed25519: quick to make for thousands of agents); registrations prove possession of it. The
   * private half stays parsed, as the agent keeps it (agent/identity.ts).
   */
  private readonly key = (() => {
    const pair = generateKeyPairSync('ed25519');
    return {
      privateKey: pair.privateKey,
      publicKey: pair.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    };
  })();

  constructor(
    private readonly fleet: Fleet,
    private readonly n: number,
  ) {}

  body() {
    return {
      info: {
        id: 'debian',
        pretty_name: 'Debian GNU/Linux 12',
        version: AGENT_VERSION,
        arch: 'amd64',
        platform: 'native',
      },
      sessions: [],
      hostname: `load-${this.n}`,
      identity: {
        mac: `02:${[24, 16, 8, 0].map((s) => ((this.n >> s) & 255).toString(16).padStart(2, '0')).join(':')}:00`,
      },
      public_key: this.key.publicKey,
      tenant_id: this.fleet.tenant,
    };
  }

  /** Agent protocol 2: what the request is about, signed with the device key (as the real agent does). */
  private proof(subject: ProofSubject): Record<string, string> {
    return proofHeaders(subject, this.key.privateKey);
  }

  /**
   * The availability call; its latency, from the request leaving to the answer read, is what the fleet reports. The
   * proof is signed before the clock starts: a real agent signs on its own device, while here thousands of agents
   * sign in one process, and that queue is the tool's, not the server's.
   */
  async auth(): Promise<void> {
    const body = this.body();
    const headers = {
      'content-type': 'application/json',
      ...this.proof({
        purpose: 'register',
        tenantId: body.tenant_id,
        mac: body.identity.mac,
        publicKey: body.public_key,
        hostname: body.hostname,
      }),
    };
    const started = performance.now();
    const inWindow = started >= this.fleet.windowFrom;
    const pending = { started };
    this.fleet.inFlight.add(pending);
    try {
      await this.call(headers, body, started, inWindow);
    } finally {
      this.fleet.inFlight.delete(pending);
    }
  }

  private async call(
    headers: Record<string, string>,
    body: ReturnType<LoadAgent['body']>,
    started: number,
    inWindow: boolean,
  ): Promise<void> {
    const res = await fetch(`${this.fleet.url()}/api/devices/auth`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
    });
    const headersAt = performance.now();
    const answer = (await res.json()) as { uid: string; token: string };
    if (!res.ok) throw new Error(`auth answered ${res.status}`);
    const took = performance.now() - started;
    if (inWindow) {
      this.fleet.authLatencies.push(took);
      if (took > SLOW_CALL_MS) {
        this.fleet.slowCalls.push({ at: Date.now() - took, headersMs: headersAt - started, ms: took });
      }
    }
    this.uid = answer.uid;
    this.token = answer.token;
  }

  async connect(): Promise<void> {
    if (this.stopped) return;
    try {
      await this.auth();
      const ws = new WebSocket(`${this.fleet.url().replace('http', 'ws')}/agent/connection`, {
        headers: {
          authorization: `Bearer ${this.token}`,
          ...this.proof({ purpose: 'tunnel', uid: this.uid }),
        },
        perMessageDeflate: false,
        maxPayload: TUNNEL_MAX_MESSAGE,
      });
      await new Promise<void>((resolve, reject) => {
        ws.once('open', () => resolve());
        ws.once('unexpected-response', (_q, r) => reject(new Error(`tunnel refused ${r.statusCode}`)));
        ws.once('error', reject);
      });
      ws.on('error', () => {});
      const session = serveTunnel(ws, {
        onStream: () => Promise.reject(new Error('load agents serve nothing')),
      });
      this.session = session;
      this.online = true;
      this.attempt = 0;
      this.fleet.changed();
      session.once('close', () => {
        this.online = false;
        this.session = undefined;
        this.fleet.changed();
        this.retry(backoffDelayMs(0));
      });
    } catch (error) {
      this.fleet.failed(error);
      this.retry(backoffDelayMs(this.attempt++));
    }
  }

  private retry(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.connect(), ms);
  }

  /** Repeats the auth call every 30 s from a random phase, as the agent does while online. */
  keepalive(): void {
    const tick = () => {
      if (this.stopped) return;
      if (this.online) this.auth().catch((error) => this.fleet.failed(error));
      this.timer = setTimeout(tick, INTERVAL_MS);
    };
    this.timer = setTimeout(tick, Math.random() * INTERVAL_MS);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.session?.close();
  }
}

class Fleet {
  tenant = '';
  serverUrl = '';
  authLatencies: number[] = [];
  /** When the steady window opened (performance.now()); calls that started before it are not counted. */
  windowFrom = Number.POSITIVE_INFINITY;
  /** When each call in flight started: those still unanswered when the window ends count as taking that long. */
  inFlight = new Set<{ started: number }>();
  /** The window's availability calls slower than SLOW_CALL_MS: when each started, when its answer's head came. */
  slowCalls: SlowCall[] = [];
  agents: LoadAgent[] = [];
  /** Failed connection attempts (availability call or tunnel) by what failed them, since the last read. */
  failures = new Map<string, number>();
  private waiters: (() => void)[] = [];
  failed(error: unknown) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    const reason = cause ?? (error instanceof Error ? error.message : String(error)).slice(0, 60);
    this.failures.set(reason, (this.failures.get(reason) ?? 0) + 1);
  }
  takeFailures(): Record<string, number> {
    const taken = Object.fromEntries(this.failures);
    this.failures.clear();
    return taken;
  }
  url() {
    return this.serverUrl;
  }
  onlineCount() {
    return this.agents.filter((a) => a.online).length;
  }
  changed() {
    for (const w of this.waiters.splice(0)) w();
  }
  async allOnline(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.onlineCount() < this.agents.length) {
      if (Date.now() > deadline) return false;
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 200);
      });
    }
    return true;
  }
}

/** An availability call that took longer than SLOW_CALL_MS. */
interface SlowCall {
  at: number;
  headersMs: number;
  ms: number;
}
const SLOW_CALL_MS = 100;
/** The pause between the forced collections that measure the server's memory and the steady window. */
const SETTLE_MS = 5_000;

/** What a worker process measured over the steady window. */
interface WindowReport {
  latencies: number[];
  slowCalls: SlowCall[];
  loop: { p50: number; p99: number; max: number };
  cpuSeconds: number;
}

/**
 * A worker: `count` agents numbered from `first`, driven by the main process. Each command answers once its work is
 * done, with what it measured.
 */
function worker(): void {
  const fleet = new Fleet();
  let loop: ReturnType<typeof monitorEventLoopDelay> | undefined;
  let cpuFrom: NodeJS.CpuUsage | undefined;
  const commands: Record<string, (arg: never) => Promise<unknown> | unknown> = {
    init(arg: { url: string; tenant: string; first: number; count: number }) {
      fleet.serverUrl = arg.url;
      fleet.tenant = arg.tenant;
      fleet.agents = Array.from({ length: arg.count }, (_, i) => new LoadAgent(fleet, arg.first + i));
    },
    async register() {
      await inBatches(fleet.agents, Math.max(4, Math.ceil(32 / PROCS)), (a) => a.auth());
      fleet.authLatencies = [];
      return fleet.agents.map((a) => a.uid);
    },
    async connect() {
      await inBatches(fleet.agents, Math.max(8, Math.ceil(64 / PROCS)), (a) => a.connect());
      return fleet.onlineCount();
    },
    allOnline: (timeoutMs: number) => fleet.allOnline(timeoutMs),
    onlineCount: () => fleet.onlineCount(),
    takeFailures: () => fleet.takeFailures(),
    keepalive() {
      for (const a of fleet.agents) a.keepalive();
    },
    windowStart() {
      fleet.authLatencies = [];
      fleet.slowCalls = [];
      fleet.windowFrom = performance.now();
      loop = monitorEventLoopDelay({ resolution: 5 });
      loop.enable();
      cpuFrom = process.cpuUsage();
    },
    windowEnd(): WindowReport {
      loop?.disable();
      const end = performance.now();
      for (const { started } of fleet.inFlight)
        if (started >= fleet.windowFrom) fleet.authLatencies.push(end - started);
      const cpu = process.cpuUsage(cpuFrom);
      const ms = (ns: number) => ns / 1e6;
      return {
        latencies: fleet.authLatencies,
        slowCalls: fleet.slowCalls,
        loop: {
          p50: ms(loop?.percentile(50) ?? 0),
          p99: ms(loop?.percentile(99) ?? 0),
          max: ms(loop?.max ?? 0),
        },
        cpuSeconds: (cpu.user + cpu.system) / 1e6,
      };
    },
    stop() {
      for (const a of fleet.agents) a.stop();
      setTimeout(() => process.exit(0), 200);
    },
  };
  process.on('message', (message: { id: number; command: string; arg: never }) => {
    Promise.resolve()
      .then(() => commands[message.command]?.(message.arg))
      .then(
        (result) => process.send?.({ id: message.id, result }),
        (error: Error) => process.send?.({ id: message.id, error: error.message }),
      );
  });
}

/** The agents spread over worker processes; each call goes to all of them and answers with their answers. */
class ProcessFleet {
  private readonly workers: ChildProcess[] = [];
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();

  constructor(procs: number) {
    for (let i = 0; i < procs; i++) {
      const child = fork(process.argv[1] as string, ['--worker'], {
        execArgv: ['--import', 'tsx'],
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      child.on('message', (m: { id: number; result?: unknown; error?: string }) => {
        const waiting = this.pending.get(m.id);
        if (!waiting) return;
        this.pending.delete(m.id);
        if (m.error !== undefined) waiting.reject(new Error(m.error));
        else waiting.resolve(m.result);
      });
      this.workers.push(child);
    }
  }

  call<T>(worker: ChildProcess, command: string, arg?: unknown): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      worker.send({ id, command, arg });
    });
  }

  all<T>(command: string, arg?: unknown | ((index: number) => unknown)): Promise<T[]> {
    return Promise.all(
      this.workers.map((w, i) => this.call<T>(w, command, typeof arg === 'function' ? arg(i) : arg)),
    );
  }

  async init(url: string, tenant: string, agents: number): Promise<void> {
    const share = Math.ceil(agents / this.workers.length);
    await this.all('init', (i: number) => ({
      url,
      tenant,
      first: i * share + 1,
      count: Math.max(0, Math.min(share, agents - i * share)),
    }));
  }

  async onlineCount(): Promise<number> {
    return (await this.all<number>('onlineCount')).reduce((a, b) => a + b, 0);
  }

  async allOnline(timeoutMs: number): Promise<boolean> {
    return (await this.all<boolean>('allOnline', timeoutMs)).every(Boolean);
  }

  pids(): number[] {
    return this.workers.map((w) => w.pid as number);
  }

  async takeFailures(): Promise<Record<string, number>> {
    const sum: Record<string, number> = {};
    for (const part of await this.all<Record<string, number>>('takeFailures')) {
      for (const [reason, n] of Object.entries(part)) sum[reason] = (sum[reason] ?? 0) + n;
    }
    return sum;
  }

  async stop(): Promise<void> {
    await Promise.race([this.all('stop'), sleep(2000)]);
    for (const w of this.workers) if (w.exitCode === null) w.kill();
  }
}

async function inBatches<T>(items: T[], size: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: size }, async () => {
      while (next < items.length) {
        const item = items[next++] as T;
        await fn(item);
      }
    }),
  );
}

async function main(): Promise<void> {
  const databaseUrl = await freshDatabase();
  if (!databaseUrl) throw new Error('set TEST_DATABASE_URL: this bench runs on PostgreSQL');
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gatehouse-bench-agents-'));
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    GATEHOUSE_DATABASE_URL: databaseUrl,
    GATEHOUSE_DATA_DIR: dataDir,
    GATEHOUSE_SSH_PORT: String(await freePort()),
    GATEHOUSE_LOG_LEVEL: 'warn',
    GATEHOUSE_DATABASE_POOL_MAX: '10',
    // The whole fleet registers from this one address, and waits pending before it is accepted.
    GATEHOUSE_REGISTRATIONS_PER_MINUTE: '1000000',
    GATEHOUSE_PENDING_DEVICES: '1000000',
    GATEHOUSE_PENDING_PER_SOURCE: '1000000',
    GATEHOUSE_PENDING_PER_BLOCK: '1000000',
    GATEHOUSE_METRICS_TOKEN: METRICS_TOKEN,
    // To compare with V8's own heap growth: GATEHOUSE_HEAP_GROWING_PERCENT=0 (core/heap.ts).
    ...(process.env.GATEHOUSE_HEAP_GROWING_PERCENT
      ? { GATEHOUSE_HEAP_GROWING_PERCENT: process.env.GATEHOUSE_HEAP_GROWING_PERCENT }
      : {}),
  };
  const fleet = new ProcessFleet(PROCS);
  let server: ServerProc | undefined;
  try {
    server = await startServer(env, port);
    const setup = spawn(process.execPath, [bin, 'setup-url'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let setupOut = '';
    setup.stdout?.on('data', (c: Buffer) => {
      setupOut += c.toString();
    });
    await once(setup, 'exit');
    const sign = new URL(setupOut.trim()).searchParams.get('sign');
    const user = { name: 'Bench', username: 'bench', email: 'bench@example.com', password: 'bench-pass' };
    const created = await fetch(`${server.url}/api/setup?sign=${sign}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(user),
    });
    if (!created.ok) throw new Error(`setup answered ${created.status}`);
    const login = (await (
      await fetch(`${server.url}/api/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'bench', password: 'bench-pass' }),
      })
    ).json()) as { token: string; tenant: string };
    await fleet.init(server.url, login.tenant, N);
    let t = performance.now();
    const uids = (await fleet.all<string[]>('register')).flat();
    const registerSeconds = (performance.now() - t) / 1000;
    await inBatches(uids, 16, async (uid) => {
      const res = await fetch(`${server?.url}/api/devices/${uid}/accept`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${login.token}` },
      });
      if (!res.ok) throw new Error(`accept answered ${res.status}`);
    });
    await sleep(3000);
    const before = procStat(server.child.pid as number);
    const memBefore = await serverMemory(server.inspectPort);

    t = performance.now();
    const firstTry = (await fleet.all<number>('connect')).reduce((a, b) => a + b, 0);
    const connectSeconds = (performance.now() - t) / 1000;
    // An agent whose first dial failed retries on its backoff, as the real one does; give those a minute.
    if (!(await fleet.allOnline(60_000))) throw new Error(`only ${await fleet.onlineCount()} of ${N} online`);
    await fleet.all('keepalive');

    // One full interval so every agent has made its auth call and the hub has pinged every tunnel once.
    await sleep(INTERVAL_MS + 5000);
    const memOnline = await serverMemory(server.inspectPort);
    // Those two forced full collections of the server's heap stall it, and the calls in flight wait them out: in
    // runs before this pause, every call over 100 ms of the window had started within a second of its start.
    // The window opens once they are answered, and counts the calls that start within it.
    await sleep(SETTLE_MS);
    await fleet.all('windowStart');
    const bucketsBefore = await authBuckets(server.url);
    const steadyStart = procStat(server.child.pid as number);
    const steadyStarted = performance.now();
    const steadyStartedAt = Date.now();
    const stopProfile = PROFILE_FILE ? await startProfile(server.inspectPort) : undefined;
    const readLoopDelay = await startLoopDelay(server.inspectPort);
    await sleep(STEADY_SECONDS * 1000);
    // The workers' own lag: every agent's answer waits in its process's event loop before the clock reads it.
    const windows = await fleet.all<WindowReport>('windowEnd');
    if (stopProfile && PROFILE_FILE) writeFileSync(PROFILE_FILE, JSON.stringify(await stopProfile()));
    const loopDelay = await readLoopDelay();
    const steadyEnd = procStat(server.child.pid as number);
    const bucketsAfter = await authBuckets(server.url);
    const steadyWall = (performance.now() - steadyStarted) / 1000;
    const latencies = windows.flatMap((w) => w.latencies).sort((x, y) => x - y);
    // When the slow calls started, by second of the window: spread out, or together (a stall somewhere)?
    const slowCalls = windows.flatMap((w) => w.slowCalls);
    const slowBySecond = new Map<number, number>();
    for (const call of slowCalls) {
      const second = Math.floor((call.at - steadyStartedAt) / 1000);
      slowBySecond.set(second, (slowBySecond.get(second) ?? 0) + 1);
    }

    // Restart: agents see their tunnels drop and come back on their own backoff.
    const windowFailures = await fleet.takeFailures();
    server.child.kill('SIGTERM');
    await server.exited;
    const downAt = performance.now();
    const restartCpuFrom = () => procStat(server?.child.pid as number).cpuTicks;
    // With --profile, the restarted server's whole life (boot, the agents' return) is profiled too.
    const restartArgs = PROFILE_FILE
      ? [
          '--cpu-prof',
          `--cpu-prof-dir=${path.dirname(path.resolve(PROFILE_FILE))}`,
          '--cpu-prof-interval=1000',
        ]
      : [];
    // The most files the new server and the busiest load process held open at once: each process may open
    // `ulimit -n` of them, and 10,000 tunnels and the calls in flight come near that.
    const mostOpen = { server: 0, tool: 0 };
    const sampleOpen = setInterval(() => {
      mostOpen.server = Math.max(mostOpen.server, openFiles(server?.child.pid as number));
      mostOpen.tool = Math.max(mostOpen.tool, ...fleet.pids().map(openFiles));
    }, 500);
    server = await startServer(env, port, restartArgs);
    const upAt = performance.now();
    const back = await fleet.allOnline(120_000);
    const allBackAt = performance.now();
    clearInterval(sampleOpen);
    // The new server's CPU from its start until every agent is back: what the storm cost it, apart from how fast
    // this one process of 10,000 agents could redial.
    const restartCpuSeconds = restartCpuFrom() / TICKS_PER_SECOND;
    // Why attempts failed between the old server's exit and all back: refused while it was down, or refused or
    // dropped by the new one.
    const restartFailures = await fleet.takeFailures();

    const perAgentKiB = (memOnline.rss - memBefore.rss) / 1024 / N;
    const heapPerAgentKiB =
      (memOnline.heapUsed + memOnline.external - memBefore.heapUsed - memBefore.external) / 1024 / N;
    const cpuPercent = ((steadyEnd.cpuTicks - steadyStart.cpuTicks) / TICKS_PER_SECOND / steadyWall) * 100;
    const results = {
      agents: N,
      register_seconds: Number(registerSeconds.toFixed(1)),
      connect_all_seconds: Number(connectSeconds.toFixed(1)),
      online_at_first_try: firstTry,
      server_rss_before_tunnels_mib: Number((memBefore.rss / 1048576).toFixed(1)),
      server_rss_all_online_mib: Number((memOnline.rss / 1048576).toFixed(1)),
      server_rss_per_agent_kib: Number(perAgentKiB.toFixed(1)),
      server_heap_and_external_per_agent_kib: Number(heapPerAgentKiB.toFixed(1)),
      server_rss_unforced_before_and_online_mib: [before.rssKiB, steadyStart.rssKiB].map((k) =>
        Number((k / 1024).toFixed(1)),
      ),
      server_cpu_percent_of_one_core_steady: Number(cpuPercent.toFixed(1)),
      auth_calls_in_window: latencies.length,
      auth_p50_ms: Number(percentile(latencies, 50).toFixed(2)),
      auth_p99_ms: Number(percentile(latencies, 99).toFixed(2)),
      auth_p90_p999_max_ms: [90, 99.9, 100].map((p) => Number(percentile(latencies, p).toFixed(1))),
      auth_over_100ms: slowCalls.length,
      auth_failed_in_and_after_window_by_reason: windowFailures,
      auth_over_100ms_head_share: Number(
        (
          slowCalls.reduce((t, c) => t + c.headersMs, 0) /
          Math.max(
            1,
            slowCalls.reduce((t, c) => t + c.ms, 0),
          )
        ).toFixed(2),
      ),
      auth_over_100ms_by_window_second: Object.fromEntries([...slowBySecond].sort((a, b) => a[0] - b[0])),
      auth_server_side_p50: bucketPercentile(bucketsBefore, bucketsAfter, 50),
      auth_server_side_p99: bucketPercentile(bucketsBefore, bucketsAfter, 99),
      server_event_loop_delay_ms_p50_p99_max: [loopDelay.p50, loopDelay.p99, loopDelay.max].map((v) =>
        Number(v.toFixed(1)),
      ),
      load_tool_processes: PROCS,
      load_tool_event_loop_delay_ms_worst_p99_and_max: [
        Math.max(...windows.map((w) => w.loop.p99)),
        Math.max(...windows.map((w) => w.loop.max)),
      ].map((v) => Number(v.toFixed(1))),
      load_tool_cpu_percent_of_one_core_steady: Number(
        ((windows.reduce((a, w) => a + w.cpuSeconds, 0) / steadyWall) * 100).toFixed(1),
      ),
      load_average_1m: Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]),
      restart_server_boot_seconds: Number(((upAt - downAt) / 1000).toFixed(1)),
      restart_all_back_after_listening_seconds: back
        ? Number(((allBackAt - upAt) / 1000).toFixed(1))
        : 'not all',
      restart_exit_to_all_back_seconds: back ? Number(((allBackAt - downAt) / 1000).toFixed(1)) : 'not all',
      restart_server_cpu_seconds_until_all_back: Number(restartCpuSeconds.toFixed(1)),
      online_after_restart: await fleet.onlineCount(),
      restart_failed_attempts_by_reason: restartFailures,
      restart_most_open_files_server_and_tool: [mostOpen.server, mostOpen.tool],
      // The server reads the same limit, and the load processes inherit it from this one.
      open_files_limit: openFilesLimit() ?? 0,
    };
    process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
    writeFigures(results);
  } finally {
    await fleet.stop();
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    await dropDatabase(databaseUrl);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (WORKER) worker();
else await main();
