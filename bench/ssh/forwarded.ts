/**
 * Scale-out: what the extra hop costs when a user's SSH connection lands on an
 * instance that does not hold the device's tunnel. Two `gatehouse serve` processes (what `npm start` runs) share
 * one PostgreSQL database, one Redis key space and the secret key; the agent, from its built bundle in its own
 * process (as install.sh runs it), holds its tunnel on server A. Server B forwards each stream to A over A's
 * internal listener. OpenSSH with an Ed25519 key goes through A (holding) and through B (forwarded), the two taking
 * turns: 9 `ssh ... true`, then 3 rounds of bulk up (`cat > /dev/null` fed by `head`) and bulk down
 * (`head -c N /dev/zero` on the device), with the CPU per GiB of the processes each path runs through (server(s)
 * and agent, from /proc/<pid>/stat). Prints a markdown table with the ratios forwarded/holding (goal: 0.8x).
 * Usage: `TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres TEST_REDIS_URL=redis://127.0.0.1:6379 npx tsx bench/ssh/forwarded.ts --mib 512`;
 * `--profile DIR` runs the servers and the agent under V8's CPU profiler (cpu-profile.cjs) and leaves
 * server.cpuprofile (A), server-2.cpuprofile (B) and agent-bench-device.cpuprofile in DIR, for profile-summary.ts.
 */
import path from 'node:path';
import { writeFigures } from '../figures';
import { loadAverage, processCpuSeconds } from './proc';
import { median, timed } from './timing';
import { ProcessWorld } from './world';

if (!process.env.TEST_DATABASE_URL || !process.env.TEST_REDIS_URL) {
  console.error('needs TEST_DATABASE_URL and TEST_REDIS_URL: the two instances share PostgreSQL and Redis');
  process.exit(2);
}
const arg = (name: string) =>
  process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined;
const mib = Number(arg('--mib') ?? 512) || 512;
const BYTES = mib * 1024 * 1024;
const GIB = mib / 1024;
const profileDir = process.argv.includes('--profile')
  ? path.resolve(arg('--profile') ?? 'profiles')
  : undefined;

/** What a failed run stops before it exits: the server and agent processes outlive this one otherwise. */
const cleanups: Array<() => Promise<void>> = [];

const load = loadAverage;

interface Samples {
  connect: number[];
  up: number[];
  down: number[];
  /** CPU seconds per GiB moved (up and down) of the path's server(s) and agent together, and of each. */
  cpu: number[];
  byProcess: Record<string, number[]>;
}

async function main(): Promise<void> {
  console.log(`load average at start: ${load()}`);
  const world = await ProcessWorld.start({ profileDir });
  cleanups.push(() => world.stop());
  const serverA = world.server;
  const serverB = await world.startSharingServer();
  const agent = world.agents[0];
  if (!agent?.child.pid || !serverA.child.pid || !serverB.child.pid) throw new Error('a process has no pid');
  const key = await world.keyForEveryHost('bench');
  const base = world.clientOptions(key.file);
  const pids = { 'server A': serverA.child.pid, 'server B': serverB.child.pid, agent: agent.child.pid };
  type Proc = keyof typeof pids;
  const paths: Record<string, { args: string[]; through: Proc[] }> = {
    holding: {
      args: [...base, '-p', String(serverA.sshPort), `${world.target()}@127.0.0.1`],
      through: ['server A', 'agent'],
    },
    forwarded: {
      args: [...base, '-p', String(serverB.sshPort), `${world.target()}@127.0.0.1`],
      through: ['server B', 'server A', 'agent'],
    },
  };

  const samples: Record<string, Samples> = {};
  for (const [name, { args, through }] of Object.entries(paths)) {
    // Warm-up (host keys, caches). B learns of A's tunnel from its lease in Redis, written as the tunnel came up.
    for (let attempt = 1; ; attempt++) {
      try {
        await timed('ssh', [...args, 'true']);
        break;
      } catch (err) {
        if (attempt === 10) throw err;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    samples[name] = {
      connect: [],
      up: [],
      down: [],
      cpu: [],
      byProcess: Object.fromEntries(through.map((p) => [p, []])),
    };
  }
  const own = (name: string) => samples[name] as Samples;
  for (let i = 0; i < 9; i++) {
    for (const [name, { args }] of Object.entries(paths))
      own(name).connect.push(await timed('ssh', [...args, 'true']));
  }
  console.log(`connect done (load ${load()})`);
  for (let round = 0; round < 3; round++) {
    for (const [name, { args, through }] of Object.entries(paths)) {
      const s = own(name);
      const before = through.map((p) => processCpuSeconds(pids[p]));
      const upMs = await timed('ssh', [...args, 'cat > /dev/null'], BYTES);
      const downMs = await timed('ssh', [...args, `head -c ${BYTES} /dev/zero`]);
      const spent = through.map((p, i) => (processCpuSeconds(pids[p]) - (before[i] ?? 0)) / (2 * GIB));
      through.forEach((p, i) => {
        s.byProcess[p]?.push(spent[i] ?? 0);
      });
      s.cpu.push(spent.reduce((a, b) => a + b, 0));
      s.up.push(mib / (upMs / 1000));
      s.down.push(mib / (downMs / 1000));
      console.log(
        `bulk round ${round + 1}: ${name} up ${s.up.at(-1)?.toFixed(1)} MiB/s, down ${s.down.at(-1)?.toFixed(1)} MiB/s, ` +
          `CPU ${s.cpu.at(-1)?.toFixed(2)} s/GiB (${through.map((p, i) => `${p} ${spent[i]?.toFixed(2)}`).join(', ')}) (load ${load()})`,
      );
    }
  }

  const h = own('holding');
  const f = own('forwarded');
  const row = (label: string, a: number, b: number, digits = 1) =>
    console.log(`| ${label} | ${a.toFixed(digits)} | ${b.toFixed(digits)} | ${(b / a).toFixed(2)} |`);
  console.log(`\nload average at the end: ${load()}`);
  console.log('\n| figure | holding (server A) | forwarded (server B to A) | forwarded/holding |');
  console.log('|---|---|---|---|');
  row(`bulk up, ${mib} MiB, median of 3 (MiB/s)`, median(h.up), median(f.up));
  row(`bulk down, ${mib} MiB, median of 3 (MiB/s)`, median(h.down), median(f.down));
  row("CPU per GiB moved, the path's servers + agent, median of 3 (s)", median(h.cpu), median(f.cpu), 2);
  for (const p of ['server B', 'server A', 'agent'] as const) {
    const hp = h.byProcess[p];
    const fp = f.byProcess[p] as number[];
    console.log(
      `| of which ${p} (s/GiB) | ${hp ? median(hp).toFixed(2) : '-'} | ${median(fp).toFixed(2)} | ${hp ? (median(fp) / median(hp)).toFixed(2) : '-'} |`,
    );
  }
  row('`ssh ... true` to exit, median of 9 (ms)', median(h.connect), median(f.connect), 0);
  writeFigures({
    mib,
    upRatio: median(f.up) / median(h.up),
    downRatio: median(f.down) / median(h.down),
    holding: { up: median(h.up), down: median(h.down), cpu: median(h.cpu), connect: median(h.connect) },
    forwarded: { up: median(f.up), down: median(f.down), cpu: median(f.cpu), connect: median(f.connect) },
  });

  await world.stop();
  cleanups.length = 0;
  if (profileDir) console.log(`profiles in ${profileDir}`);
  process.exit(0);
}

main().catch(async (err) => {
  console.error(err);
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  process.exit(1);
});
