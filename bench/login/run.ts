/**
 * Login latency with the chosen password hash (scrypt N=2^15, r=8, p=3, from core/auth/password.ts), through the
 * real HTTP API: a successful login, a wrong password, an unknown user (which burns one hash), a locked-out pair
 * (which spends none), and a burst of concurrent logins. Uses PostgreSQL when TEST_DATABASE_URL is set.
 *
 *   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/login/run.ts
 */
import { startServer } from '../../test/support/server';

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

function summary(name: string, samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  const fmt = (n: number) => n.toFixed(1);
  return `| ${name} | ${s.length} | ${fmt(percentile(s, 50))} | ${fmt(percentile(s, 99))} | ${fmt(s[s.length - 1] as number)} |`;
}

async function main() {
  const rounds = Number(process.env.ROUNDS ?? 100);
  // A high threshold so the wrong-password series never locks; the locked series uses its own user.
  const server = await startServer({
    ssh: false,
    overrides: { auth: { tokenTtl: 3600, lockoutThreshold: 1_000_000, lockoutMaxMinutes: 60 } },
  });
  try {
    await server.setup();
    const time = async (body: unknown, headers: Record<string, string> = {}) => {
      const t0 = performance.now();
      const res = await server.api('POST', '/api/login', { body, headers });
      return { ms: performance.now() - t0, status: res.status };
    };
    const series = async (body: unknown, expect: number) => {
      const out: number[] = [];
      for (let i = 0; i < rounds; i++) {
        const r = await time(body);
        if (r.status !== expect) throw new Error(`expected ${expect}, got ${r.status}`);
        out.push(r.ms);
      }
      return out;
    };
    await series({ username: 'ada', password: 'correct-horse' }, 200); // warm-up
    const ok = await series({ username: 'ada', password: 'correct-horse' }, 200);
    const wrong = await series({ username: 'ada', password: 'wrong-horse' }, 401);
    const unknown = await series({ username: 'nobody', password: 'wrong-horse' }, 401);

    // Lock one pair by writing its lock into the cache, then time the refusals.
    const user = await server.kernel.container.cradle.users.findByLogin('ada');
    const lockout = server.kernel.container.cradle.lockout;
    await server.kernel.container.cradle.cache.set(
      `lockout:login:127.0.0.1:${user?.id}:until`,
      String(Math.ceil(Date.now() / 1000) + 600),
      600,
    );
    const locked = await series({ username: 'ada', password: 'correct-horse' }, 429);
    await lockout.reset('login', '127.0.0.1', `${user?.id}`);

    const concurrency = 8;
    const burst: number[] = [];
    const t0 = performance.now();
    for (let i = 0; i < rounds / concurrency; i++) {
      const rs = await Promise.all(
        Array.from({ length: concurrency }, () => time({ username: 'ada', password: 'correct-horse' })),
      );
      for (const r of rs) burst.push(r.ms);
    }
    const perSecond = (burst.length / (performance.now() - t0)) * 1000;

    const lines = [
      `store: ${server.databaseUrl ? 'PostgreSQL' : 'PGlite (in memory)'}; ${rounds} requests per series`,
      '',
      '| series | n | p50 ms | p99 ms | max ms |',
      '|---|---|---|---|---|',
      summary('login, right password', ok),
      summary('login, wrong password', wrong),
      summary('login, unknown user (one hash burnt)', unknown),
      summary('login, locked-out pair (429, no hash)', locked),
      summary(`login, ${concurrency} concurrent`, burst),
      '',
      `throughput at ${concurrency} concurrent: ${perSecond.toFixed(1)} logins/s`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await server.stop();
  }
}

await main();
