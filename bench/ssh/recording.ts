/**
 * What session recording costs (the goal: under 5 % of PTY output time, stable over 5 runs). Starts the server as
 * `npm start` runs it and an agent from its bundle, each in its own process, then times `ssh -tt` printing 64 MB
 * through the gateway with the namespace's recording off and on, alternated so both halves share the machine's
 * noise. Besides the wall time of each run it reports the CPU seconds the server and the agent used, which is
 * steadier than the wall time on a two-core machine.
 *
 * Usage: `TEST_DATABASE_URL=postgres://... npx tsx bench/ssh/recording.ts [--pairs 7] [--mb 64] [--profile DIR]`.
 * `--profile DIR` runs the server and the agent under V8's profiler (cpu-profile.cjs) and leaves the profiles there.
 * The run's figures are one line per pair and a summary; `bench/ssh/run.ts` measures the same thing among its
 * other figures, with 15 pairs.
 */
import path from 'node:path';
import {
  type Activity,
  activityBetween,
  loadAverage,
  postgresCpuByRole,
  postgresCpuDifference,
  processActivity,
  processCpuSeconds,
  processTimes,
  totalSeconds,
} from './proc';
import { ptyOutput, recordingPairs, setRecording, settled } from './recording-pairs';
import { median, timed } from './timing';
import { ProcessWorld } from './world';

const arg = (name: string) =>
  process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined;
const pairs = Number(arg('--pairs') ?? 7) || 7;
const megabytes = Number(arg('--mb') ?? 64) || 64;
/** `--only on` or `--only off`: every run with recording so, for a profile of one side (`--pairs` runs in all). */
const only = arg('--only');
const profileDir = arg('--profile') ? path.resolve(arg('--profile') as string) : undefined;

async function main(): Promise<void> {
  if (!process.env.TEST_DATABASE_URL)
    console.warn('TEST_DATABASE_URL unset: the server runs on its embedded store');
  console.log(`load average at start: ${loadAverage()}`);
  const world = await ProcessWorld.start({ profileDir });
  try {
    const key = await world.keyForEveryHost('bench');
    const command = ptyOutput(
      [...world.clientOptions(key.file), '-p', String(world.sshPort), `${world.target()}@127.0.0.1`],
      megabytes * 1_000_000,
    );
    const cpu = () => world.pids.reduce((sum, pid) => sum + processCpuSeconds(pid), 0);
    const serverCpu = () => processCpuSeconds(world.pids[0] ?? 0);
    const [serverPid = 0, agentPid = 0] = world.pids;
    const run = async (wanted: boolean) => {
      const on = only === undefined ? wanted : only === 'on';
      await setRecording(world, on);
      const before = cpu();
      const serverBefore = serverCpu();
      // The ssh client's CPU: this process reaps it, so it lands in this process's children's time.
      const clientBefore = processTimes('self').children;
      const rolesBefore = postgresCpuByRole();
      const serverIo = processActivity(serverPid);
      const agentIo = processActivity(agentPid);
      const ms = await timed('ssh', command);
      // What the store still has to take after the client has its output is the server's work too: wait for the
      // session's rows before reading the CPU counters (at most a few seconds).
      await settled(world);
      const rolesAfter = postgresCpuByRole();
      const roles = postgresCpuDifference(rolesBefore, rolesAfter);
      const store = totalSeconds(rolesAfter) - totalSeconds(rolesBefore);
      const client = processTimes('self').children - clientBefore;
      const spent = cpu() - before;
      return {
        ms,
        cpu: spent,
        server: serverCpu() - serverBefore,
        store,
        roles,
        path: spent + store + client,
        io: {
          server: activityBetween(serverIo, processActivity(serverPid)),
          agent: activityBetween(agentIo, processActivity(agentPid)),
        },
      };
    };
    const show = (r: Run) =>
      `${r.ms.toFixed(0)} ms (whole path ${r.path.toFixed(2)} s of CPU; server and agent ${r.cpu.toFixed(2)} s, server ${r.server.toFixed(2)} s, PostgreSQL ${r.store.toFixed(2)} s${r.roles ? `: ${r.roles}` : ''})`;
    const { off, on } = await recordingPairs(pairs, run, (a, b, pair) =>
      console.log(`pair ${pair}: off ${show(a)}, on ${show(b)}, load ${loadAverage()}`),
    );
    const offMs = median(off.map((r) => r.ms));
    const onMs = median(on.map((r) => r.ms));
    const offCpu = median(off.map((r) => r.cpu));
    const onCpu = median(on.map((r) => r.cpu));
    const offServer = median(off.map((r) => r.server));
    const onServer = median(on.map((r) => r.server));
    const offPath = median(off.map((r) => r.path));
    const onPath = median(on.map((r) => r.path));
    // Each pair's own cost, then the median: a pair shares its few seconds of the machine's noise.
    const pairCost = (key: 'ms' | 'path') =>
      median(off.map((a, i) => (((on[i]?.[key] ?? a[key]) - a[key]) / a[key]) * 100));
    const offStore = median(off.map((r) => r.store));
    const onStore = median(on.map((r) => r.store));
    console.log(
      `recording, ${megabytes} MB of PTY output, median of ${pairs}: off ${offMs.toFixed(0)} ms, on ${onMs.toFixed(0)} ms, ` +
        `cost ${(((onMs - offMs) / offMs) * 100).toFixed(1)} %; server and agent CPU off ${offCpu.toFixed(2)} s, ` +
        `on ${onCpu.toFixed(2)} s, cost ${(((onCpu - offCpu) / offCpu) * 100).toFixed(1)} %; ` +
        `the server's alone off ${offServer.toFixed(2)} s, on ${onServer.toFixed(2)} s; PostgreSQL's CPU off ${offStore.toFixed(2)} s, on ${onStore.toFixed(2)} s`,
    );
    console.log(
      `whole path's CPU (ssh client, server, agent, PostgreSQL), medians: off ${offPath.toFixed(2)} s, on ${onPath.toFixed(2)} s, ` +
        `cost ${(((onPath - offPath) / offPath) * 100).toFixed(1)} %; median of the pairs' own costs: wall ${pairCost('ms').toFixed(1)} %, ` +
        `CPU ${pairCost('path').toFixed(1)} %`,
    );
    // How the server and the agent moved the bytes: whether recording changes the agent's work, which does none of
    // the recording, shows in the number and size of its reads and writes and in how often it waited.
    for (const side of ['server', 'agent'] as const) {
      const of = (runs: Run[]) => {
        const m = (key: keyof Activity) => median(runs.map((r) => r.io[side][key]));
        const kib = (bytes: number, calls: number) => (calls ? bytes / calls / 1024 : 0).toFixed(1);
        return (
          `${m('reads').toFixed(0)} reads of ${kib(m('readBytes'), m('reads'))} KiB, ` +
          `${m('writes').toFixed(0)} writes of ${kib(m('writtenBytes'), m('writes'))} KiB, ` +
          `${m('voluntary').toFixed(0)} waits, ${m('involuntary').toFixed(0)} preemptions`
        );
      };
      console.log(`${side}'s system calls per run, medians: off ${of(off)}; on ${of(on)}`);
    }
  } finally {
    await world.stop();
  }
  if (profileDir) console.log(`profiles in ${profileDir}`);
}

/** One timed run: wall milliseconds, and CPU seconds of the server and agent and of PostgreSQL's processes. */
interface Run {
  ms: number;
  cpu: number;
  server: number;
  store: number;
  /** PostgreSQL's CPU by process (backend, walwriter, checkpointer, ...). */
  roles: string;
  /** CPU seconds of the whole path: the ssh client, the server, the agent and PostgreSQL. */
  path: number;
  /** The server's and the agent's system calls and context switches during the run. */
  io: { server: Activity; agent: Activity };
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
