/**
 * Where the CPU of a bulk transfer through the gateway goes, per process and direction: 1 GiB up and 1 GiB down
 * through a Gatehouse server (`gatehouse serve`, its own process) to an agent from its bundle (its own process),
 * printing MiB/s, each process's user and system seconds, and the server's major garbage collections (V8 starts
 * one per 64 MB of buffers allocated, which is what made buffer copies on the data path expensive).
 * Usage: `TEST_DATABASE_URL=postgres://... npx tsx bench/ssh/cpu-split.ts [--gib 1] [--perf server|agent] [--only up|down]
 * [--profile DIR]`;
 * `--perf` records the process with `perf record -g` during each transfer (/tmp/perf.<direction>.data);
 * `--profile DIR` runs the server and the agent under V8's CPU profiler and leaves their profiles in DIR;
 * `--promoted FILE` samples, over the measured rounds, the server's allocations that outlived a scavenge (what the
 * young generation promotes, `bench/ssh/promoted.cjs`), writes them to FILE as a `.heapprofile` and prints where
 * they were allocated; with `--promoted-of agent`, the agent's instead of the server's.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
const promotedFile = process.argv.includes('--promoted')
  ? path.resolve(process.argv[process.argv.indexOf('--promoted') + 1] ?? 'promoted.heapprofile')
  : undefined;
/** `--promoted-of agent`: `--promoted` samples the agent's process instead of the server's. */
const promotedOfAgent = process.argv.includes('--promoted-of')
  ? process.argv[process.argv.indexOf('--promoted-of') + 1] === 'agent'
  : false;
const directions = only === 'up' || only === 'down' ? [only, only] : ['up', 'down', 'up', 'down'];

async function main(): Promise<void> {
  const sampler = `--require ${path.resolve('bench/ssh/promoted.cjs')}`;
  process.env.BENCH_SERVER_NODE_OPTIONS ??= [
    `--require ${path.resolve('bench/ssh/trace-gc.cjs')}`,
    ...(promotedFile && !promotedOfAgent ? [sampler] : []),
  ].join(' ');
  if (promotedFile && promotedOfAgent) process.env.BENCH_AGENT_NODE_OPTIONS ??= sampler;
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
  const sampledPid = promotedOfAgent ? agentPid : serverPid;
  if (promotedFile) process.kill(sampledPid, 'SIGUSR2');
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
  if (promotedFile) {
    process.kill(sampledPid, 'SIGUSR2');
    const written = path.join(tmpdir(), `gatehouse-promoted-${sampledPid}.heapprofile`);
    await waitForFile(written);
    renameSync(written, promotedFile);
    printPromoted(promotedFile);
  }
  await world.stop();
  process.exit(0);
}

/** Waits up to 10 s for the server to write its profile. */
async function waitForFile(file: string): Promise<void> {
  for (let i = 0; i < 100 && !existsSync(file); i++) await new Promise((r) => setTimeout(r, 100));
}

interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapNode[];
}

/** The sampled bytes by the allocating function and by the nearest caller outside `node:` internals. */
function printPromoted(file: string): void {
  const root = (JSON.parse(readFileSync(file, 'utf8')) as { head: HeapNode }).head;
  const bySite = new Map<string, number>();
  let total = 0;
  const frame = (n: HeapNode) =>
    `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*node_modules\//, '')}:${n.callFrame.lineNumber + 1}`;
  const walk = (node: HeapNode, stack: HeapNode[]) => {
    const path = [...stack, node];
    if (node.selfSize > 0) {
      total += node.selfSize;
      const ours = [...path].reverse().find((n) => n.callFrame.url && !n.callFrame.url.startsWith('node:'));
      const site = `${frame(node)}  <-  ${ours ? frame(ours) : '-'}`;
      bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
    }
    for (const child of node.children) walk(child, path);
  };
  walk(root, []);
  console.log(
    `\nsampled bytes that outlived a scavenge: ${(total / 1024 / 1024).toFixed(1)} MiB; the top sites:`,
  );
  for (const [site, size] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, 25)) {
    console.log(`${((100 * size) / total).toFixed(1).padStart(5)} %  ${site}`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
