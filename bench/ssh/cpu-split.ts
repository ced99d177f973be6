/**
 * Where the CPU of a bulk transfer through the gateway goes, per process and direction: 1 GiB up and 1 GiB down
 * through a Gatehouse server (`gatehouse serve`, its own process) to an agent from its bundle (its own process),
 * printing MiB/s, each process's user and system seconds, and the server's major garbage collections (V8 starts
 * one per 64 MB of buffers allocated, which is what made buffer copies on the data path expensive).
 * Usage: `TEST_DATABASE_URL=postgres://... npx tsx bench/ssh/cpu-split.ts [--gib 1] [--perf server|agent] [--only up|down]
 * [--profile DIR]`;
 * `--perf` records the process with `perf record -g` during each transfer (/tmp/perf.<direction>.data);
 * `--profile DIR` runs the server and the agent under V8's CPU profiler and leaves their profiles in DIR.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { processTimes as cpu } from './proc';
import { timed } from './timing';
import { ProcessWorld } from './world';

const gib = Number(process.argv[process.argv.indexOf('--gib') + 1] ?? 1) || 1;
const perfTarget = process.argv.includes('--perf')
  ? process.argv[process.argv.indexOf('--perf') + 1]
  : undefined;
const profileDir = process.argv.includes('--profile')
  ? path.resolve(process.argv[process.argv.indexOf('--profile') + 1] ?? 'profiles')
  : undefined;

/** `--only up|down`: every round one direction (for a profile of that direction alone). */
const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : undefined;
const directions = only === 'up' || only === 'down' ? [only, only] : ['up', 'down', 'up', 'down'];

async function main(): Promise<void> {
  process.env.BENCH_SERVER_NODE_OPTIONS ??= `--require ${path.resolve('bench/ssh/trace-gc.cjs')}`;
  const world = await ProcessWorld.start({ profileDir });
  const key = await world.keyForEveryHost('split');
  const args = [...world.clientOptions(key.file), '-p', String(world.sshPort), `${world.target()}@127.0.0.1`];
  await timed('ssh', [...args, 'true']);
  const bytes = Math.round(gib * 1024 * 1024 * 1024);
  const [serverPid = 0, agentPid = 0] = world.pids;
  const majors = () => world.server.lines.filter((line) => line.includes('Mark-Compact')).length;
  // What started the server's major collections since line `from`: "allocation limit" (the old generation grew by
  // what scavenges promoted), "external memory pressure" (buffers), "task", "memory reducer".
  const starts = (from: number) => {
    const count = new Map<string, number>();
    for (const line of world.server.lines.slice(from)) {
      const reason = /\[IncrementalMarking\] Start \(([^)]*)\)/.exec(line)?.[1];
      if (reason) count.set(reason, (count.get(reason) ?? 0) + 1);
    }
    return [...count].map(([reason, n]) => `${reason} ${n}`).join(', ') || '-';
  };
  console.log(
    '| direction | MiB/s | server user s | server sys s | agent user s | agent sys s | server major GCs | started by |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const direction of directions) {
    const s0 = cpu(serverPid);
    const a0 = cpu(agentPid);
    const gc0 = majors();
    const line0 = world.server.lines.length;
    const perf = perfTarget
      ? spawn(
          'perf',
          ['record', '-F', '999', '-g', '-p', String(perfTarget === 'agent' ? agentPid : serverPid)].concat([
            '-o',
            `/tmp/perf.${direction}.data`,
          ]),
          { stdio: 'ignore' },
        )
      : undefined;
    const ms =
      direction === 'up'
        ? await timed('ssh', [...args, 'cat > /dev/null'], bytes)
        : await timed('ssh', [...args, `head -c ${bytes} /dev/zero`]);
    const s1 = cpu(serverPid);
    const a1 = cpu(agentPid);
    if (perf) {
      perf.kill('SIGINT');
      await new Promise((resolve) => perf.once('exit', resolve));
    }
    const per = (x: number) => (x / gib).toFixed(2);
    console.log(
      `| ${direction} | ${(bytes / 1024 / 1024 / (ms / 1000)).toFixed(0)} | ${per(s1.user - s0.user)} | ${per(s1.sys - s0.sys)} | ${per(a1.user - a0.user)} | ${per(a1.sys - a0.sys)} | ${majors() - gc0} | ${starts(line0)} |`,
    );
  }
  console.log('(seconds per GiB moved)');
  await world.stop();
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
