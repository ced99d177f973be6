/**
 * Scale-out (DESIGN.md section 9): what the extra hop costs when a user's SSH connection lands on an instance that
 * does not hold the device's tunnel. Two Gatehouse servers share one PostgreSQL database and one Redis; the agent's
 * tunnel is on the first. Bulk upload and `ssh ... true` through each server's gateway, taking turns.
 * Usage: `TEST_DATABASE_URL=postgres://... TEST_REDIS_URL=redis://... npx tsx bench/ssh/forwarded.ts [--mib 512]`.
 */
import { GatewayWorld } from '../../test/integration/ssh/gateway-world';
import { startServer } from '../../test/support/server';
import { median, timed } from './timing';

if (!process.env.TEST_DATABASE_URL || !process.env.TEST_REDIS_URL) {
  console.error('needs TEST_DATABASE_URL and TEST_REDIS_URL: the two instances share PostgreSQL and Redis');
  process.exit(2);
}
const mib = Number(process.argv[process.argv.indexOf('--mib') + 1] ?? 512) || 512;
const BYTES = mib * 1024 * 1024;

async function main(): Promise<void> {
  const world = await GatewayWorld.start({ deviceName: 'forwarded-bench' });
  const other = await startServer({ sharing: world.server });
  const key = await world.keyForEveryHost('bench');
  const base = [...world.sshOptions(), ...world.keyOptions(key.file), '-o', 'LogLevel=ERROR'];
  const paths = {
    holding: [...base, '-p', String(world.server.sshPort), `${world.target()}@127.0.0.1`],
    forwarded: [...base, '-p', String(other.sshPort), `${world.target()}@127.0.0.1`],
  };
  const samples: Record<string, { connect: number[]; bulk: number[] }> = {};
  for (const [name, args] of Object.entries(paths)) {
    await timed('ssh', [...args, 'true']);
    samples[name] = { connect: [], bulk: [] };
  }
  for (let i = 0; i < 9; i++) {
    for (const [name, args] of Object.entries(paths))
      samples[name]?.connect.push(await timed('ssh', [...args, 'true']));
  }
  for (let round = 0; round < 3; round++) {
    for (const [name, args] of Object.entries(paths)) {
      const ms = await timed('ssh', [...args, 'cat > /dev/null'], BYTES);
      samples[name]?.bulk.push(mib / (ms / 1000));
      console.log(`bulk round ${round + 1}: ${name} ${(mib / (ms / 1000)).toFixed(1)} MiB/s`);
    }
  }
  const h = samples.holding as { connect: number[]; bulk: number[] };
  const f = samples.forwarded as { connect: number[]; bulk: number[] };
  console.log('\n| figure | holding instance | other instance (forwarded) | forwarded/holding |');
  console.log('|---|---|---|---|');
  console.log(
    `| bulk upload, ${mib} MiB, median of 3 (MiB/s) | ${median(h.bulk).toFixed(1)} | ${median(f.bulk).toFixed(1)} | ${(median(f.bulk) / median(h.bulk)).toFixed(2)} |`,
  );
  console.log(
    `| \`ssh ... true\` to exit, median of 9 (ms) | ${median(h.connect).toFixed(0)} | ${median(f.connect).toFixed(0)} | ${(median(f.connect) / median(h.connect)).toFixed(2)} |`,
  );
  await other.stop();
  await world.stop();
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
