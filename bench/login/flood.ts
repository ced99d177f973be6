/**
 * A real user's login latency while others flood the login call with bogus logins, against the same user on a quiet
 * server in the same run (the ratio is the figure). 50 flooders each keep one bogus login in flight (a new unknown
 * name each time, so the per-pair lockout never stops them); the real user signs in ROUNDS times in a row from its
 * own address. Flooders come from one address (127.0.0.2) or from 50 (127.0.1.1-50). Run once with the server's
 * defaults (hashing cap, fair queue, per-source budget) and once with them off, as the server was before.
 *
 *   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/login/flood.ts
 */
import { defaultUser, startServer, type TestServer } from '../../test/support/server';
import { postFrom } from '../../test/support/source';

const ROUNDS = Number(process.env.ROUNDS ?? 10);
const FLOODERS = 50;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const max = (xs: number[]) => Math.max(...xs);

interface Series {
  ms: number[];
  statuses: Record<string, number>;
  flood: Record<string, number>;
}

async function realLogins(server: TestServer, flooderAddress: ((i: number) => string) | undefined) {
  let running = flooderAddress !== undefined;
  const flood: Record<string, number> = {};
  let n = 0;
  const flooders = flooderAddress
    ? Array.from({ length: FLOODERS }, async (_, i) => {
        while (running) {
          const r = await postFrom(server.url, flooderAddress(i), '/api/login', {
            username: `bogus-${i}-${n++}`,
            password: 'guess',
          });
          flood[r.status] = (flood[r.status] ?? 0) + 1;
        }
      })
    : [];
  // Let the flood reach its steady state before measuring.
  if (flooderAddress) await new Promise((r) => setTimeout(r, 2_000));
  const series: Series = { ms: [], statuses: {}, flood };
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = performance.now();
    const r = await postFrom(server.url, '127.0.0.1', '/api/login', {
      username: defaultUser.username,
      password: defaultUser.password,
    });
    series.ms.push(performance.now() - t0);
    series.statuses[r.status] = (series.statuses[r.status] ?? 0) + 1;
  }
  running = false;
  await Promise.all(flooders);
  return series;
}

async function scenario(name: string, auth: Record<string, number>) {
  const server = await startServer({
    ssh: false,
    overrides: { auth: { tokenTtl: 3600, lockoutThreshold: 3, lockoutMaxMinutes: 60, ...auth } },
  });
  try {
    await server.setup();
    await realLogins(server, undefined); // warm-up
    const progress = (what: string, s: Series) => {
      process.stderr.write(
        `${name}, ${what}: ${s.ms.map((x) => x.toFixed(0)).join(' ')} ${JSON.stringify(s.flood)}\n`,
      );
      return s;
    };
    const quiet = progress('quiet', await realLogins(server, undefined));
    const oneSource = progress('one address', await realLogins(server, () => '127.0.0.2'));
    const manySources = progress('50 addresses', await realLogins(server, (i) => `127.0.1.${i + 1}`));
    const fmt = (s: Series) =>
      `${median(s.ms).toFixed(0)} | ${max(s.ms).toFixed(0)} | ${(median(s.ms) / median(quiet.ms)).toFixed(2)} | ${JSON.stringify(s.statuses)} | ${JSON.stringify(s.flood)}`;
    return [
      `| ${name}, quiet | ${fmt(quiet)} |`,
      `| ${name}, flood from 1 address | ${fmt(oneSource)} |`,
      `| ${name}, flood from 50 addresses | ${fmt(manySources)} |`,
    ];
  } finally {
    await server.stop();
  }
}

const lines = [
  `real user: ${ROUNDS} sequential logins per series; flood: ${FLOODERS} bogus logins always in flight`,
  '',
  '| server, series | real login p50 ms | max ms | p50 / quiet p50 | real login answers | flood answers |',
  '|---|---|---|---|---|---|',
  ...(await scenario('defaults', {})),
  ...(await scenario('caps off', { hashConcurrency: 1000, hashQueue: 100_000, loginFailuresPerSource: 0 })),
];
process.stdout.write(`${lines.join('\n')}\n`);
