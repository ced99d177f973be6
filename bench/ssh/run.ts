/**
 * The SSH gateway against OpenSSH on the same machine (see docs/content/developers/gateway.md). Starts a local
 * sshd (port 0 picked here), a Gatehouse server as `npm start` runs it (`gatehouse serve`, its own process, on
 * PostgreSQL) and an agent from its built bundle (its own process, as install.sh runs it), then measures in one run:
 *  - bulk throughput of 1 GiB up to the device and 1 GiB down from it: gateway + agent vs direct `ssh` vs `ssh -J`
 *    through sshd as jump host, and the machine's CPU time per GiB moved;
 *  - time from `ssh ... true` to exit (median of several) for the same three paths;
 *  - 100 sessions opened in parallel, wall time, for the three paths;
 *  - PTY output through the gateway with the namespace's recording on vs off.
 * Every path signs in as the same account (`--account NAME`; by default one made for the benchmark, see
 * ./account.ts). Prints ratios; append them to bench/RESULTS.md. Usage: `TEST_DATABASE_URL=postgres://... npx tsx bench/ssh/run.ts [--gib 1] [--profile DIR] [--json FILE]`;
 * `--profile DIR` runs the server and the agent under `node --cpu-prof` and leaves their profiles in DIR.
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { writeFigures } from '../figures';
import {
  CpuGroup,
  loadAverage,
  machineBusySeconds,
  postgresCpuSeconds,
  processCpuSeconds,
  processTimes,
} from './proc';
import { ptyOutput, recordingPairs, setRecording, settled } from './recording-pairs';
import { median, timed } from './timing';
import { ProcessWorld } from './world';

/** Recording off and on, alternated: this many pairs (about 5 s each). */
const RECORDING_PAIRS = 15;
/** A terminal's output per run, on each path and in each recording pair. */
const PTY_BYTES = 64_000_000;

const gib = Number(process.argv[process.argv.indexOf('--gib') + 1] ?? 1) || 1;
const BYTES = Math.round(gib * 1024 * 1024 * 1024);
/**
 * `--kex NAME` makes every path use that key exchange. By default each side picks its best: OpenSSH 9 with sshd
 * picks the post-quantum sntrup761x25519-sha512, about 90 ms of the client's CPU per session, which the gateway
 * (ssh2: curve25519-sha256 at best) does not offer. `--kex curve25519-sha256` compares the paths on one exchange.
 */
const kex = process.argv.includes('--kex') ? process.argv[process.argv.indexOf('--kex') + 1] : undefined;
/** `--cipher NAME` makes every path use that cipher (the client picks chacha20-poly1305 by default). */
const cipher = process.argv.includes('--cipher')
  ? process.argv[process.argv.indexOf('--cipher') + 1]
  : undefined;
/** `--paths gateway,direct` limits the run while tuning; the figures in RESULTS.md come from all three. */
const only = process.argv.includes('--paths')
  ? (process.argv[process.argv.indexOf('--paths') + 1] ?? '').split(',')
  : undefined;
/**
 * `--baseline-agent FILE` runs a second agent from another bundle (say, main's) as a second device, measured as the
 * path `gateway-baseline` beside `gateway`: an agent change against its baseline within one run.
 */
const baselineAgent = process.argv.includes('--baseline-agent')
  ? path.resolve(process.argv[process.argv.indexOf('--baseline-agent') + 1] ?? '')
  : undefined;
/**
 * `--ssh-upstream` runs a second agent from the same bundle with the session protocol off, as the path
 * `gateway-ssh`: SSH inside the tunnel (what older agents and plain-HTTP tunnels get) against the session protocol.
 */
const sshUpstream = process.argv.includes('--ssh-upstream');
const profileDir = process.argv.includes('--profile')
  ? path.resolve(process.argv[process.argv.indexOf('--profile') + 1] ?? 'profiles')
  : undefined;

/** What a failed run stops before it exits: the server and agent processes outlive this one otherwise. */
const cleanups: Array<() => Promise<void> | void> = [];

async function freePort(): Promise<number> {
  const s = createServer().listen(0, '127.0.0.1');
  await once(s, 'listening');
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

const load = loadAverage;

async function main(): Promise<void> {
  if (!process.env.TEST_DATABASE_URL)
    console.warn('TEST_DATABASE_URL unset: the server runs on its embedded store');
  console.log(`load average at start: ${load()}`);
  const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-bench-ssh-'));
  const world = await ProcessWorld.start({
    agents: {
      'bench-device': path.resolve('agent/dist/gatehouse-agent/gatehouse-agent.mjs'),
      ...(baselineAgent ? { 'bench-baseline': baselineAgent } : {}),
      ...(sshUpstream
        ? {
            'bench-ssh': {
              bundle: path.resolve('agent/dist/gatehouse-agent/gatehouse-agent.mjs'),
              env: { GATEHOUSE_SESSION_PROTOCOL: 'off' },
            },
          }
        : {}),
    },
    profileDir,
  });
  cleanups.push(() => world.stop());
  // Every path signs in as the same account (bench/ssh/account.ts says why it is not root).
  const { account } = world;
  console.log(`signing in as ${account}`);
  const key = await world.keyForEveryHost('bench');

  // A local OpenSSH server that knows the same key, for the direct and jump-host paths.
  const sshdPort = await freePort();
  spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(dir, 'host_key')]);
  const pub = Buffer.from(key.data, 'base64').toString();
  // sshd reads the keys file as the account signing in, which is not root (./account.ts).
  chmodSync(dir, 0o755);
  writeFileSync(path.join(dir, 'authorized_keys'), `${pub}\n`, { mode: 0o644 });
  writeFileSync(
    path.join(dir, 'sshd_config'),
    [
      `Port ${sshdPort}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${path.join(dir, 'host_key')}`,
      `AuthorizedKeysFile ${path.join(dir, 'authorized_keys')}`,
      'PermitRootLogin yes',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'UsePAM no',
      'StrictModes no',
      'AllowTcpForwarding yes',
      `PidFile ${path.join(dir, 'sshd.pid')}`,
      'MaxStartups 200:30:300',
      'MaxSessions 200',
    ].join('\n'),
  );
  // sshd refuses to start without its privilege separation directory (created by the Debian service, not by apt).
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const sshd = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', path.join(dir, 'sshd_config')], {
    stdio: 'ignore',
  });
  cleanups.push(() => void sshd.kill());
  await new Promise((r) => setTimeout(r, 500));

  // What each kind of process spends, children and all (./proc.ts, CpuGroup): sshd with its sessions, the server,
  // the agents with their sessions, and this process with the clients it starts from now on (their ProxyCommands
  // included). Where no group can be made, the processes' own figures stand in, which miss sshd's sessions.
  const groups = {
    clients: CpuGroup.create('gatehouse-bench-clients'),
    sshd: CpuGroup.create('gatehouse-bench-sshd'),
    server: CpuGroup.create('gatehouse-bench-server'),
    agents: CpuGroup.create('gatehouse-bench-agents'),
  };
  const { pids } = world;
  groups.sshd?.add(sshd.pid ?? 0);
  groups.server?.add(pids[0] ?? 0);
  for (const pid of pids.slice(1)) groups.agents?.add(pid);
  groups.clients?.add('self');
  const dropGroups = () => {
    for (const group of Object.values(groups)) group?.remove();
  };
  cleanups.push(dropGroups);
  const accounted = Object.values(groups).every(Boolean);
  console.log(
    accounted
      ? 'CPU accounting: control groups (every process of a path, reaped or not)'
      : 'CPU accounting: processes and the children they reaped (no control group could be made: sshd sessions are missed)',
  );
  const cpuOf = {
    clients: () => groups.clients?.seconds() ?? processCpuSeconds('self'),
    sshd: () => groups.sshd?.seconds() ?? processCpuSeconds(sshd.pid ?? 0),
    server: () => groups.server?.seconds() ?? processCpuSeconds(pids[0] ?? 0),
    agents: () =>
      groups.agents?.seconds() ?? pids.slice(1).reduce((sum, pid) => sum + processCpuSeconds(pid), 0),
  };

  const opts = [
    ...(cipher ? ['-c', cipher] : []),
    ...(kex ? ['-o', `KexAlgorithms=${kex}`] : []),
    ...world.clientOptions(key.file),
    '-o',
    'ConnectTimeout=120',
  ];
  const direct = [...opts, '-p', String(sshdPort), `${account}@127.0.0.1`];
  // What `-J` runs, spelled as its ProxyCommand so the jump leg gets the same key options (ssh -J passes only -F).
  const jumpLeg = ['ssh', ...opts, '-W', '%h:%p', '-p', String(sshdPort), `${account}@127.0.0.1`].join(' ');
  const jump = [...opts, '-o', `ProxyCommand=${jumpLeg}`, '-p', String(sshdPort), `${account}@127.0.0.1`];
  const gateway = [...opts, '-p', String(world.sshPort), `${world.target()}@127.0.0.1`];
  const paths: Record<string, string[]> = { direct, jump, gateway };
  if (baselineAgent) {
    paths['gateway-baseline'] = [
      ...opts,
      '-p',
      String(world.sshPort),
      `${world.target(account, 'bench-baseline')}@127.0.0.1`,
    ];
  }

  if (sshUpstream) {
    paths['gateway-ssh'] = [
      ...opts,
      '-p',
      String(world.sshPort),
      `${world.target(account, 'bench-ssh')}@127.0.0.1`,
    ];
  }

  // The paths take turns in every phase, so a slow spell of the machine falls on all of them alike.
  const chosen = Object.entries(paths).filter(([name]) => !only || only.includes(name));
  const results: Record<string, Record<string, number>> = {};
  type Samples = {
    connect: number[];
    up: number[];
    down: number[];
    cpu: number[];
    machine: number[];
    gwCpu: number[];
  };
  const samples: Record<string, Samples> = {};
  for (const [name, args] of chosen) {
    await timed('ssh', [...args, 'true']); // warm-up (host keys, caches)
    samples[name] = { connect: [], up: [], down: [], cpu: [], machine: [], gwCpu: [] };
  }
  for (let i = 0; i < 9; i++) {
    for (const [name, args] of chosen) samples[name]?.connect.push(await timed('ssh', [...args, 'true']));
  }
  const gatewayCpu = () => cpuOf.server() + cpuOf.agents();
  // Every process a path runs: the clients, sshd with its sessions, the server and the agent with its sessions.
  // Other work on the machine is not counted, as /proc/stat would.
  const pathCpu = () => cpuOf.clients() + cpuOf.sshd() + gatewayCpu();
  for (let round = 0; round < 3; round++) {
    for (const [name, args] of chosen) {
      const own = samples[name] as Samples;
      const busyBefore = machineBusySeconds();
      const pathBefore = pathCpu();
      const gwBefore = gatewayCpu();
      const upMs = await timed('ssh', [...args, 'cat > /dev/null'], BYTES);
      const downMs = await timed('ssh', [...args, `head -c ${BYTES} /dev/zero`]);
      own.machine.push((machineBusySeconds() - busyBefore) / (2 * gib));
      own.cpu.push((pathCpu() - pathBefore) / (2 * gib));
      own.gwCpu.push((gatewayCpu() - gwBefore) / (2 * gib));
      own.up.push(BYTES / 1024 / 1024 / (upMs / 1000));
      own.down.push(BYTES / 1024 / 1024 / (downMs / 1000));
      console.log(
        `bulk round ${round + 1}: ${name} up ${own.up.at(-1)?.toFixed(1)} MiB/s, down ${own.down.at(-1)?.toFixed(1)} MiB/s, CPU of the path ${own.cpu.at(-1)?.toFixed(2)} s/GiB, of the machine ${own.machine.at(-1)?.toFixed(2)} s/GiB (load ${load()})`,
      );
    }
  }
  // Where the CPU of 100 sessions at once goes, per kind of process: on two cores the phase is bound by the
  // machine, so what each path spends in all is what decides its time.
  const parallelCpu = () => ({
    clients: groups.clients ? groups.clients.seconds() : processTimes('self').children,
    sshd: cpuOf.sshd(),
    server: cpuOf.server(),
    agents: cpuOf.agents(),
    postgres: postgresCpuSeconds(),
    machine: machineBusySeconds(),
  });
  for (const [name, args] of chosen) {
    const cpuBefore = parallelCpu();
    const parallelStarted = performance.now();
    await Promise.all(Array.from({ length: 100 }, () => timed('ssh', [...args, 'true'])));
    const cpuAfter = parallelCpu();
    console.log(
      `100 parallel, ${name}: CPU seconds ${Object.entries(cpuAfter)
        .map(([k, v]) => `${k} ${(v - cpuBefore[k as keyof typeof cpuBefore]).toFixed(1)}`)
        .join(', ')}`,
    );
    const own = samples[name] as Samples;
    results[name] = {
      connectMs: median(own.connect),
      upMibPerS: median(own.up),
      downMibPerS: median(own.down),
      cpuSecondsPerGib: median(own.cpu),
      machineCpuSecondsPerGib: median(own.machine),
      gatehouseCpuSecondsPerGib: median(own.gwCpu),
      parallel100Ms: performance.now() - parallelStarted,
    };
    console.log(name, results[name], `load ${load()}`);
  }

  // A terminal's output on each path (recording off): what a noisy build or a `cat` of a log costs, which moves in
  // the pieces a PTY hands its reader, not in a bulk transfer's (bench/RESULTS.md, "What the agent does when the
  // server records").
  if (chosen.some(([n]) => n === 'gateway')) await setRecording(world, false);
  const pty: Record<string, number[]> = Object.fromEntries(chosen.map(([name]) => [name, []]));
  for (let round = 0; round < 3; round++) {
    for (const [name, args] of chosen) {
      const ms = await timed('ssh', ptyOutput(args, PTY_BYTES));
      pty[name]?.push(PTY_BYTES / 1e6 / (ms / 1000));
    }
  }
  for (const [name] of chosen) {
    const own = results[name];
    if (own) own.ptyMbPerS = median(pty[name] ?? []);
  }
  console.log(
    `PTY output, ${PTY_BYTES / 1e6} MB, MB/s by round: ${chosen.map(([n]) => `${n} ${(pty[n] ?? []).map((x) => x.toFixed(0)).join(', ')}`).join('; ')}`,
  );

  // Recording: PTY output of a command through the gateway, recording on vs off, alternated to share noise
  // (RECORDING_PAIRS pairs: five did not separate a 5 % effect from this machine's noise, fifteen did; bench/RESULTS.md,
  // "PostgreSQL's page faults under recording").
  const ptyCmd = ptyOutput(gateway, PTY_BYTES);
  const pairs =
    process.argv.includes('--no-recording') || !chosen.some(([n]) => n === 'gateway') ? 0 : RECORDING_PAIRS;
  // With BENCH_SERVER_NODE_OPTIONS="--require bench/ssh/trace-gc.cjs", each run also says how many major
  // collections the server made during it.
  const majors = () => world.server.lines.filter((line) => line.includes('Mark-Compact')).length;
  const gcs = (from: number) => (majors() > 0 ? ` (${majors() - from} server major GCs)` : '');
  // As bench/ssh/recording.ts measures it (recording-pairs.ts), each run waiting for its session to be closed in the
  // store before the next starts.
  const recorded = async (wanted: boolean) => {
    await setRecording(world, wanted);
    const from = majors();
    const ms = await timed('ssh', ptyCmd);
    await settled(world);
    return { ms, gcs: gcs(from) };
  };
  const runs = await recordingPairs(pairs, recorded, (a, b, pair) =>
    console.log(
      `recording pair ${pair}: off ${a.ms.toFixed(0)} ms${a.gcs}, on ${b.ms.toFixed(0)} ms${b.gcs}`,
    ),
  );
  const off = runs.off.map((r) => r.ms);
  const on = runs.on.map((r) => r.ms);
  const rec = { offMs: median(off), onMs: median(on) };
  if (pairs > 0) console.log('recording', rec);

  const fmt = (x: number | undefined) => (x === undefined ? '-' : x.toFixed(2));
  const g = results.gateway ?? {};
  const d = results.direct ?? {};
  const j = results.jump ?? {};
  const ratio = (a: number | undefined, b: number | undefined) =>
    a === undefined || b === undefined ? '-' : fmt(a / b);
  const row = (label: string, key: string) =>
    console.log(
      `| ${label} | ${fmt(g[key])} | ${fmt(d[key])} | ${fmt(j[key])} | ${ratio(g[key], d[key])} | ${ratio(g[key], j[key])} |`,
    );
  console.log(`\nload average at the end: ${load()}`);
  console.log('\n| figure | gateway | direct ssh | ssh -J | gateway/direct | gateway/-J |');
  console.log('|---|---|---|---|---|---|');
  row(`bulk up, ${gib} GiB, median of 3 (MiB/s)`, 'upMibPerS');
  row(`bulk down, ${gib} GiB, median of 3 (MiB/s)`, 'downMibPerS');
  row("CPU per GiB moved, the path's processes, median of 3 (s)", 'cpuSecondsPerGib');
  row(
    'CPU per GiB moved, the whole machine (other work included), median of 3 (s)',
    'machineCpuSecondsPerGib',
  );
  row('`ssh ... true` to exit, median of 9 (ms)', 'connectMs');
  row('100 sessions in parallel, wall (ms)', 'parallel100Ms');
  row(`PTY output, ${PTY_BYTES / 1e6} MB, recording off, median of 3 (MB/s)`, 'ptyMbPerS');
  console.log(
    `\ngateway: server + agent processes' own CPU per GiB moved: ${fmt(g.gatehouseCpuSecondsPerGib)} s`,
  );
  for (const [other, heading] of [
    ['gateway-baseline', 'gateway (baseline agent)'],
    ['gateway-ssh', 'gateway, SSH inside the tunnel'],
  ] as const) {
    const b = results[other];
    if (!b) continue;
    console.log(`\n| figure | gateway (this agent) | ${heading} | this/other | other/direct |`);
    console.log('|---|---|---|---|---|');
    for (const [label, key] of [
      ['bulk up (MiB/s)', 'upMibPerS'],
      ['bulk down (MiB/s)', 'downMibPerS'],
      ["CPU per GiB, the path's processes (s)", 'cpuSecondsPerGib'],
      ['`ssh ... true` to exit (ms)', 'connectMs'],
      ['100 sessions in parallel, wall (ms)', 'parallel100Ms'],
    ] as const) {
      console.log(
        `| ${label} | ${fmt(g[key])} | ${fmt(b[key])} | ${ratio(g[key], b[key])} | ${ratio(b[key], d[key])} |`,
      );
    }
  }
  if (pairs > 0) {
    console.log(
      `recording: 64 MB of PTY output, median of ${RECORDING_PAIRS}: off ${fmt(rec.offMs)} ms, on ${fmt(rec.onMs)} ms, cost ${fmt(((rec.onMs - rec.offMs) / rec.offMs) * 100)}%`,
    );
  }

  writeFigures({
    gib,
    results,
    recording:
      pairs > 0
        ? {
            ...rec,
            costPercent: ((rec.onMs - rec.offMs) / rec.offMs) * 100,
            pairCostsPercent: on.map((ms, i) => ((ms - (off[i] ?? ms)) / (off[i] ?? ms)) * 100),
          }
        : undefined,
  });

  sshd.kill();
  await world.stop();
  dropGroups();
  rmSync(dir, { recursive: true, force: true });
  if (profileDir) console.log(`profiles in ${profileDir}`);
  process.exit(0);
}

main().catch(async (err) => {
  console.error(err);
  for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => {});
  process.exit(1);
});
