/**
 * The sessions list with each session's device, the stats call's live-session count, and namespace-wide tag
 * renames over devices, public keys and firewall rules, through the real HTTP API. One namespace holds 200
 * devices (registered through the agent call), 2,000 sessions spread over them, and 200 public keys and 200
 * firewall rules whose filters carry the renamed tags. Uses PostgreSQL when TEST_DATABASE_URL is set.
 *
 *   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/sessions/list.ts
 */
import { randomBytes } from 'node:crypto';
import { agentAuthRequest } from '../../test/support/device-keys';
import { startServer } from '../../test/support/server';

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

async function main() {
  const rounds = Number(process.env.ROUNDS ?? 50);
  // 200 devices from one address: lift the per-source limits on new devices and the pending cap.
  const server = await startServer({
    ssh: false,
    overrides: {
      limits: {
        registrationsPerMinute: 1000,
        pendingDevices: 1000,
        pendingPerSource: 1000,
        pendingPerBlock: 1000,
      },
    },
  });
  try {
    const me = await server.setup();
    const { db, sessions } = server.kernel.container.cradle;
    const devices: string[] = [];
    for (let i = 0; i < 200; i++) {
      const res = await server.api(
        'POST',
        '/api/devices/auth',
        agentAuthRequest({
          tenant: me.tenant,
          hostname: `bench-${i}`,
          mac: `02:00:00:00:${(i >> 8).toString(16).padStart(2, '0')}:${(i & 255).toString(16).padStart(2, '0')}`,
          keyLabel: `bench-key-${i}`,
        }),
      );
      devices.push(res.body.uid as string);
    }
    await db('devices')
      .where({ tenant_id: me.tenant })
      .update({ tags: db.raw("array['tag-a', 'tag-b']::text[]") });
    for (let i = 0; i < 2000; i++) {
      await sessions.open({
        tenantId: me.tenant,
        deviceUid: devices[i % devices.length] as string,
        username: 'root',
        ip: '192.0.2.1',
        type: 'term',
        recorded: false,
      });
    }
    const filterRows = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ i, tags: db.raw("array['tag-a', 'tag-c']::text[]") }));
    await db('public_keys').insert(
      filterRows(200).map(({ i, tags }) => ({
        tenant_id: me.tenant,
        fingerprint: randomBytes(16)
          .toString('hex')
          .replace(/(..)(?!$)/g, '$1:'),
        data: 'bench',
        name: `key-${i}`,
        username: '.*',
        filter_tags: tags,
      })),
    );
    await db('firewall_rules').insert(
      filterRows(200).map(({ i, tags }) => ({
        id: randomBytes(12).toString('hex'),
        tenant_id: me.tenant,
        priority: i,
        action: 'deny',
        source_ip: '.*',
        username: '.*',
        filter_tags: tags,
      })),
    );

    const time = async (method: string, path: string, body?: unknown) => {
      const t0 = performance.now();
      const res = await server.api(method, path, { token: me.token, ...(body ? { body } : {}) });
      const ms = performance.now() - t0;
      if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
      return ms;
    };
    const series = async (label: string, run: (i: number) => Promise<number>) => {
      await run(-1); // warm-up
      const out: number[] = [];
      for (let i = 0; i < rounds; i++) out.push(await run(i));
      out.sort((a, b) => a - b);
      console.log(
        `| ${label} | ${rounds} | ${percentile(out, 50).toFixed(1)} | ${percentile(out, 99).toFixed(1)} |`,
      );
    };
    const one = (await server.api('GET', '/api/sessions?per_page=1', { token: me.token })).body[0].uid;

    console.log(`store: ${server.databaseUrl ? 'PostgreSQL' : 'PGlite'}`);
    console.log('| call | n | p50 (ms) | p99 (ms) |\n|---|---|---|---|');
    await series('GET /api/sessions, per_page=10', () => time('GET', '/api/sessions?per_page=10'));
    await series('GET /api/sessions, per_page=100', () => time('GET', '/api/sessions?per_page=100'));
    await series('GET /api/sessions/{uid}', () => time('GET', `/api/sessions/${one}`));
    await series('GET /api/stats (2,000 live sessions)', () => time('GET', '/api/stats'));
    await series('GET /api/tags', () => time('GET', '/api/tags'));
    // Renames back and forth: each one rewrites 200 devices, 200 keys and 200 rules in one transaction.
    let name = 'tag-a';
    await series('PUT /api/tags/{tag} (600 rows)', async () => {
      const next = name === 'tag-a' ? 'tag-z' : 'tag-a';
      const ms = await time('PUT', `/api/tags/${name}`, { tag: next });
      name = next;
      return ms;
    });
  } finally {
    await server.stop();
  }
}

await main();
