/**
 * `npm run bench`: the speed goals of docs/content/developers/development.md (Benchmarks) in one run. Runs, one after another and each in processes of its own
 * (as users run the server and the agent), the benchmarks behind those goals, collects their figures (`--json`)
 * and prints one table: every goal, what this run measured, and whether it is met.
 *  - bench/ssh/run.ts: bulk up and down against direct `ssh` and `ssh -J`, CPU per GiB, 100 parallel sessions,
 *    the cost of recording (15 pairs);
 *  - bench/ssh/forwarded.ts: a connection forwarded through a second instance against a local one;
 *  - bench/agents/load.ts: 10,000 idle agents (RSS, auth p99, all back after a restart);
 *  - bench/store/models.ts: the device list of a namespace with 100,000 devices.
 * Each benchmark's own tables are printed as it runs; the figures behind the summary are in bench/RESULTS.md's
 * sections for each. Needs TEST_DATABASE_URL (a PostgreSQL server whose user can create databases) and
 * TEST_REDIS_URL (for the two instances of the scale-out figure). Its parts took about 20 minutes in all on a 2-core
 * machine of ordinary speed; `--quick` took 19 minutes on a day that machine was 3 to 4 times slower.
 *
 *   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres TEST_REDIS_URL=redis://127.0.0.1:6379 \
 *     npm run bench [-- --quick] [-- --only ssh,forwarded,agents,devices]
 *
 * `--quick` runs smaller sizes (256 MiB, 2,000 agents, 20,000 devices) to try the harness; its figures are not the
 * goals' and say so.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const quick = process.argv.includes('--quick');
const onlyAt = process.argv.indexOf('--only');
const only = onlyAt >= 0 ? (process.argv[onlyAt + 1] ?? '').split(',') : undefined;
if (!process.env.TEST_DATABASE_URL || !process.env.TEST_REDIS_URL) {
  console.error('needs TEST_DATABASE_URL and TEST_REDIS_URL (see the comment at the top of bench/run.ts)');
  process.exit(2);
}

const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-bench-'));

type Figures = Record<string, unknown>;

/** Runs one benchmark in its own process, its output passed through, and returns the figures it wrote. */
function run(
  name: string,
  script: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<Figures> {
  const json = path.join(dir, `${name}.json`);
  console.log(`\n## ${name}: ${script} ${args.join(' ')}\n`);
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(import.meta.dirname, script), ...args, '--json', json],
    {
      stdio: 'inherit',
      env: { ...process.env, ...env },
    },
  );
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`${script} exited with ${code}`));
      resolve(JSON.parse(readFileSync(json, 'utf8')) as Figures);
    });
  });
}

type Goal = { goal: string; measured: string; met: boolean | undefined };
const goals: Goal[] = [];
const num = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x : Number.NaN);
const fixed = (x: number, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : '-');
function goal(text: string, value: number, target: number, atMost: boolean, measured: string): void {
  goals.push({
    goal: text,
    measured,
    met: Number.isFinite(value) ? (atMost ? value <= target : value >= target) : undefined,
  });
}

/**
 * One benchmark's share of the table. A benchmark that fails is a row saying so, and the others still run: one
 * broken part must not hide every other goal's figure.
 */
async function part(name: string, measure: () => Promise<void>): Promise<void> {
  if (only && !only.includes(name)) return;
  try {
    await measure();
  } catch (err) {
    console.error(err);
    goals.push({ goal: `${name}: the benchmark failed`, measured: (err as Error).message, met: undefined });
    process.exitCode = 1;
  }
}

async function main(): Promise<void> {
  await part('ssh', async () => {
    const ssh = await run('ssh', 'ssh/run.ts', ['--gib', quick ? '0.25' : '1']);
    const paths = ssh.results as Record<string, Record<string, number>>;
    const g = paths.gateway ?? {};
    const d = paths.direct ?? {};
    const j = paths.jump ?? {};
    const up = num(g.upMibPerS) / num(d.upMibPerS);
    const down = num(g.downMibPerS) / num(d.downMibPerS);
    goal(
      'bulk up >= 0.9x direct ssh',
      up,
      0.9,
      false,
      `${fixed(up)} (${fixed(num(g.upMibPerS), 0)} / ${fixed(num(d.upMibPerS), 0)} MiB/s)`,
    );
    goal(
      'bulk down >= 0.9x direct ssh',
      down,
      0.9,
      false,
      `${fixed(down)} (${fixed(num(g.downMibPerS), 0)} / ${fixed(num(d.downMibPerS), 0)} MiB/s)`,
    );
    const cpu = num(g.cpuSecondsPerGib) / num(j.cpuSecondsPerGib);
    goal(
      "CPU per GiB <= ssh -J's",
      cpu,
      1,
      true,
      `${fixed(cpu)}x (${fixed(num(g.cpuSecondsPerGib))} / ${fixed(num(j.cpuSecondsPerGib))} s)`,
    );
    const parallel = num(g.parallel100Ms) / num(j.parallel100Ms);
    goal(
      '100 parallel sessions <= 0.6x ssh -J',
      parallel,
      0.6,
      true,
      `${fixed(parallel)} (${fixed(num(g.parallel100Ms), 0)} / ${fixed(num(j.parallel100Ms), 0)} ms)`,
    );
    const rec = ssh.recording as { costPercent: number; pairCostsPercent: number[] };
    const worst = Math.max(...rec.pairCostsPercent.map(num));
    goal(
      'recording costs < 5 % of PTY output time, stable over 5 runs',
      worst,
      5,
      true,
      `median ${fixed(num(rec.costPercent), 1)} %, pairs ${rec.pairCostsPercent.map((c) => fixed(num(c), 1)).join(', ')} %`,
    );
  });

  await part('forwarded', async () => {
    const fw = await run('forwarded', 'ssh/forwarded.ts', ['--mib', quick ? '256' : '512']);
    const up = num(fw.upRatio);
    const down = num(fw.downRatio);
    goal('forwarded through a second instance >= 0.8x local, up', up, 0.8, false, fixed(up));
    goal('forwarded through a second instance >= 0.8x local, down', down, 0.8, false, fixed(down));
  });

  await part('agents', async () => {
    const n = quick ? '2000' : '10000';
    const fleet = await run('agents', 'agents/load.ts', [n, '60']);
    const rss = num(fleet.server_rss_all_online_mib);
    goal(`${n} agents: server RSS < 500 MiB`, rss, 500, true, `${fixed(rss, 1)} MiB`);
    const p99 = num(fleet.auth_p99_ms);
    goal(
      `${n} agents: auth p99 < 50 ms (at the load tool)`,
      p99,
      50,
      true,
      `${fixed(p99, 1)} ms; server side ${String(fleet.auth_server_side_p99)}`,
    );
    const back = num(fleet.restart_exit_to_all_back_seconds);
    goal(
      `${n} agents: all back < 60 s after a restart`,
      back,
      60,
      true,
      Number.isFinite(back) ? `${fixed(back, 1)} s` : 'not all came back',
    );
  });

  await part('devices', async () => {
    const list = await run(
      'devices',
      'store/models.ts',
      ['--rounds', '1', '--devices', quick ? '20000' : '100000'],
      // 400 calls a list, so that the p99 is set by a few slow calls and not, as with 60, by the slowest alone.
      { LIST_CALLS: quick ? '60' : '400' },
    );
    const series = list.series as Record<string, { p50: number; p99: number }>;
    for (const [name, { p99 }] of Object.entries(series)) {
      if (!name.startsWith('device list') || name.includes('page 500')) continue;
      goal(`${name.replace(/ ms$/, '')}: p99 < 20 ms`, num(p99), 20, true, `${fixed(num(p99), 1)} ms`);
    }
  });

  console.log(`\n## Speed goals${quick ? ' (--quick: smaller sizes than the goals name)' : ''}\n`);
  console.log('| goal | this run | met |');
  console.log('|---|---|---|');
  for (const g of goals) {
    console.log(`| ${g.goal} | ${g.measured} | ${g.met === undefined ? '-' : g.met ? 'yes' : 'no'} |`);
  }
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => rmSync(dir, { recursive: true, force: true }));
