/**
 * What a new device's registration (POST /api/devices/auth for a device the namespace does not know) costs with the
 * pending list shared between sources: without an install key from many addresses, with a key, and into a full
 * list where each registration pushes out the oldest keyless one; beside the availability call of a known device,
 * which the sharing must leave alone. Measured in-process (the service the route calls) on the store of
 * TEST_DATABASE_URL, one call at a time.
 *
 *   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres TEST_REDIS_URL=redis://127.0.0.1:6379 \
 *     node --import tsx bench/devices/registration.ts
 */
import { loadavg } from 'node:os';
import { agentAuthRequest } from '../../test/support/device-keys';
import { startServer } from '../../test/support/server';

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const p99 = (xs: number[]) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(xs.length * 0.99) - 1)] as number;

async function main() {
  const rounds = Number(process.env.ROUNDS ?? 300);
  const server = await startServer({
    ssh: false,
    overrides: { limits: { pendingDevices: rounds, registrationsPerMinute: 1_000_000 } },
  });
  try {
    const owner = await server.setup();
    const { devices } = server.kernel.container.cradle;
    const made = await server.api('POST', '/api/namespaces/install-keys', {
      token: owner.token,
      body: { name: 'bench' },
    });
    const installKey = made.body.key as string;
    let n = 0;
    /** One registration of a device new to the namespace, from `address`; its time in ms. */
    const fresh = async (address: string, key?: string) => {
      const i = ++n;
      const label = `bench-${i}`;
      const mac = `02:00:${[i >> 16, i >> 8, i].map((b) => (b & 255).toString(16).padStart(2, '0')).join(':')}:01`;
      const req = agentAuthRequest({ tenant: owner.tenant, hostname: label, mac, keyLabel: label });
      const body = { ...req.body, ...(key ? { install_key: key } : {}) } as Parameters<
        typeof devices.authenticate
      >[0];
      const t = performance.now();
      await devices.authenticate(body, address, req.headers);
      return { ms: performance.now() - t, body, label, mac };
    };
    // Half the list without a key, one device per address of 10.x, so no share is reached.
    const keyless: number[] = [];
    for (let i = 0; i < rounds / 2; i++) keyless.push((await fresh(`10.${i >> 8}.${i & 255}.1`)).ms);
    // The other half with a key, all from one address.
    const keyed: number[] = [];
    let known: Awaited<ReturnType<typeof fresh>> | undefined;
    for (let i = 0; i < rounds / 2; i++) {
      const r = await fresh('192.0.2.1', installKey);
      keyed.push(r.ms);
      known ??= r;
    }
    // The list is full: each keyed registration pushes out the oldest keyless one.
    const full: number[] = [];
    for (let i = 0; i < rounds / 2; i++) full.push((await fresh('192.0.2.1', installKey)).ms);
    // The availability call of a device already registered.
    const again: number[] = [];
    if (!known) throw new Error('no device registered');
    for (let i = 0; i < rounds; i++) {
      const req = agentAuthRequest({
        tenant: owner.tenant,
        hostname: known.label,
        mac: known.mac,
        keyLabel: known.label,
      });
      const t = performance.now();
      await devices.authenticate(known.body, '192.0.2.1', req.headers);
      again.push(performance.now() - t);
    }
    const fmt = (n: number) => n.toFixed(2);
    console.log(`rounds ${rounds}, load average ${loadavg()[0]?.toFixed(1)}, node ${process.version}`);
    console.log('| call | p50 ms | p99 ms |');
    console.log('|---|---|---|');
    console.log(`| new device, no key, list not full | ${fmt(p50(keyless))} | ${fmt(p99(keyless))} |`);
    console.log(`| new device, install key, list not full | ${fmt(p50(keyed))} | ${fmt(p99(keyed))} |`);
    console.log(
      `| new device, install key, list full (one makes way) | ${fmt(p50(full))} | ${fmt(p99(full))} |`,
    );
    console.log(`| availability call of a known device | ${fmt(p50(again))} | ${fmt(p99(again))} |`);
  } finally {
    await server.stop();
  }
}

await main();
