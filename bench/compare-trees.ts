/**
 * The speed figures of this checkout against another one (the tree before a change), in one run: the device list
 * (bench/store/models.ts, 100,000 devices), agent sign-in p99 and server memory (bench/agents/load.ts, 10,000
 * agents) and bulk throughput through the gateway against direct `ssh` (bench/ssh/run.ts, 1 GiB). Each part runs
 * in the two trees one after the other, the order swapped every round, so that the machine's load falls on both
 * alike; each tree runs its own copy of the benchmark, against its own code. Prints one table of medians with the
 * ratio after / before.
 *
 *   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres TEST_REDIS_URL=redis://127.0.0.1:6379 \
 *     node --import tsx bench/compare-trees.ts <other tree> [--rounds 2] [--parts devices,agents,ssh]
 *
 * The other tree is a checkout with its own node_modules (`git worktree add --detach DIR <commit>` and `npm ci`).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  options: {
    rounds: { type: 'string', default: '1' },
    parts: { type: 'string', default: 'devices,agents,ssh' },
  },
  allowPositionals: true,
  strict: true,
});
const other = positionals[0] ? path.resolve(positionals[0]) : '';
if (!other || !existsSync(path.join(other, 'bench', 'run.ts'))) {
  console.error('usage: compare-trees.ts <other tree> [--rounds N] [--parts devices,agents,ssh]');
  process.exit(2);
}
if (!process.env.TEST_DATABASE_URL || !process.env.TEST_REDIS_URL) {
  console.error('needs TEST_DATABASE_URL and TEST_REDIS_URL');
  process.exit(2);
}
const here = path.resolve(import.meta.dirname, '..');
const trees = { after: here, before: other } as const;
type TreeName = keyof typeof trees;
const rounds = Math.max(1, Number(values.rounds) || 1);
const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-compare-'));

type Json = Record<string, any>;
interface Part {
  script: string;
  args: string[];
  env?: Record<string, string>;
  /** The figures to compare, by name, from the benchmark's JSON. */
  figures(json: Json): Record<string, number>;
}

const parts: Record<string, Part> = {
  devices: {
    script: 'store/models.ts',
    args: ['--rounds', '1', '--devices', '100000'],
    env: { LIST_CALLS: '400' },
    figures(json) {
      const out: Record<string, number> = {};
      const series = (json.series ?? {}) as Record<string, { p50: number; p99: number }>;
      for (const [name, s] of Object.entries(series)) {
        if (!name.startsWith('device list') && !name.startsWith('agent auth')) continue;
        out[`${name.replace(/ ms$/, '')} p50 (ms)`] = s.p50;
        out[`${name.replace(/ ms$/, '')} p99 (ms)`] = s.p99;
      }
      return out;
    },
  },
  agents: {
    script: 'agents/load.ts',
    args: ['10000', '60'],
    figures: (json) => ({
      'agents: auth p99 (ms)': json.auth_p99_ms,
      'agents: server RSS, all online (MiB)': json.server_rss_all_online_mib,
    }),
  },
  ssh: {
    script: 'ssh/run.ts',
    args: ['--gib', '1', '--paths', 'gateway,direct'],
    figures(json) {
      const g = json.results?.gateway ?? {};
      const d = json.results?.direct ?? {};
      return {
        'bulk up, gateway / direct ssh': g.upMibPerS / d.upMibPerS,
        'bulk down, gateway / direct ssh': g.downMibPerS / d.downMibPerS,
      };
    },
  },
};

function runPart(tree: TreeName, name: string, round: number): Promise<Record<string, number>> {
  const part = parts[name] as Part;
  const json = path.join(dir, `${name}-${tree}-${round}.json`);
  console.log(
    `\n## ${name}, ${tree} (${trees[tree]}), round ${round + 1}; load ${loadavg()[0]?.toFixed(1)}\n`,
  );
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(trees[tree], 'bench', part.script), ...part.args, '--json', json],
    { cwd: trees[tree], stdio: 'inherit', env: { ...process.env, ...part.env } },
  );
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`${part.script} in ${tree} exited with ${code}`));
      resolve(part.figures(JSON.parse(readFileSync(json, 'utf8')) as Json));
    });
  });
}

const median = (xs: number[]) => {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};

const seen: Record<string, Record<TreeName, number[]>> = {};
try {
  for (let round = 0; round < rounds; round++) {
    for (const name of String(values.parts).split(',').filter(Boolean)) {
      if (!parts[name]) throw new Error(`no part "${name}"; one of ${Object.keys(parts).join(', ')}`);
      const order: TreeName[] = round % 2 === 0 ? ['before', 'after'] : ['after', 'before'];
      for (const tree of order) {
        for (const [figure, value] of Object.entries(await runPart(tree, name, round))) {
          seen[figure] ??= { before: [], after: [] };
          seen[figure][tree].push(value);
        }
      }
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

console.log(`\n## This checkout (after) against ${other} (before), medians of ${rounds}\n`);
console.log('| figure | after | before | after / before |');
console.log('|---|---|---|---|');
for (const [figure, { before, after }] of Object.entries(seen)) {
  const a = median(after);
  const b = median(before);
  console.log(`| ${figure} | ${a.toFixed(2)} | ${b.toFixed(2)} | ${(a / b).toFixed(2)} |`);
}
