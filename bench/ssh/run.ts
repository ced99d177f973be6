/**
 * The SSH gateway against OpenSSH on the same machine (issue 5). Starts a local sshd (port 0 picked here), a
 * Gatehouse server with a real agent, then measures in one run:
 *  - bulk throughput of 1 GiB to the device: gateway + agent vs direct `ssh` vs `ssh -J` through sshd as jump host;
 *  - time from `ssh ... true` to exit (median of several) for the same three paths;
 *  - 100 sessions opened in parallel, wall time, for the three paths;
 *  - PTY output through the gateway with the namespace's recording on vs off.
 * Prints ratios; append them to bench/RESULTS.md. Usage: `npx tsx bench/ssh/run.ts [--gib 1]`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GatewayWorld } from '../../test/integration/ssh/gateway-world';
import { median, timed } from './timing';

const gib = Number(process.argv[process.argv.indexOf('--gib') + 1] ?? 1) || 1;
const BYTES = Math.round(gib * 1024 * 1024 * 1024);
/** `--cipher NAME` makes every path use that cipher (the client picks chacha20-poly1305 by default). */
const cipher = process.argv.includes('--cipher')
  ? process.argv[process.argv.indexOf('--cipher') + 1]
  : undefined;
/** `--paths gateway,direct` limits the run while tuning; the figures in RESULTS.md come from all three. */
const only = process.argv.includes('--paths')
  ? (process.argv[process.argv.indexOf('--paths') + 1] ?? '').split(',')
  : undefined;

async function freePort(): Promise<number> {
  const s = createServer().listen(0, '127.0.0.1');
  await once(s, 'listening');
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

/** Seconds all cores of the machine spent busy so far (user, system, interrupts), from /proc/stat. */
function machineBusySeconds(): number {
  const fields =
    readFileSync('/proc/stat', 'utf8').split('\n')[0]?.trim().split(/\s+/).slice(1).map(Number) ?? [];
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0] = fields;
  return (user + nice + system + irq + softirq) / 100;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-bench-ssh-'));
  const world = await GatewayWorld.start({ deviceName: 'bench-device' });
  const key = await world.keyForEveryHost('bench');

  // A local OpenSSH server that knows the same key, for the direct and jump-host paths.
  const sshdPort = await freePort();
  spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(dir, 'host_key')]);
  const pub = Buffer.from(key.data, 'base64').toString();
  writeFileSync(path.join(dir, 'authorized_keys'), `${pub}\n`, { mode: 0o600 });
  writeFileSync(
    path.join(dir, 'sshd_config'),
    [
      `Port ${sshdPort}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${path.join(dir, 'host_key')}`,
      `AuthorizedKeysFile ${path.join(dir, 'authorized_keys')}`,
      'PermitRootLogin yes',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'UsePAM no',
      'StrictModes no',
      'AllowTcpForwarding yes',
      `PidFile ${path.join(dir, 'sshd.pid')}`,
      'MaxStartups 200:30:300',
      'MaxSessions 200',
    ].join('\n'),
  );
  // sshd refuses to start without its privilege separation directory (created by the Debian service, not by apt).
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const sshd = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', path.join(dir, 'sshd_config')], {
    stdio: 'ignore',
  });
  await new Promise((r) => setTimeout(r, 500));

  const opts = [
    ...(cipher ? ['-c', cipher] : []),
    ...world.sshOptions(),
    ...world.keyOptions(key.file),
    '-o',
    'LogLevel=ERROR',
    '-o',
    'ControlPath=none',
  ];
  const direct = [...opts, '-p', String(sshdPort), 'root@127.0.0.1'];
  // What `-J` runs, spelled as its ProxyCommand so the jump leg gets the same key options (ssh -J passes only -F).
  const jumpLeg = ['ssh', ...opts, '-W', '%h:%p', '-p', String(sshdPort), 'root@127.0.0.1'].join(' ');
  const jump = [...opts, '-o', `ProxyCommand=${jumpLeg}`, '-p', String(sshdPort), 'root@127.0.0.1'];
  const gateway = [...opts, '-p', String(world.server.sshPort), `${world.target()}@127.0.0.1`];
  const paths = { direct, jump, gateway };

  // The paths take turns in every phase, so a slow spell of the machine falls on all of them alike.
  const chosen = Object.entries(paths).filter(([name]) => !only || only.includes(name));
  const results: Record<string, Record<string, number>> = {};
  const samples: Record<string, { connect: number[]; bulk: number[]; cpu: number[] }> = {};
  for (const [name, args] of chosen) {
    await timed('ssh', [...args, 'true']); // warm-up (host keys, caches)
    samples[name] = { connect: [], bulk: [], cpu: [] };
  }
  for (let i = 0; i < 9; i++) {
    for (const [name, args] of chosen) samples[name]?.connect.push(await timed('ssh', [...args, 'true']));
  }
  for (let round = 0; round < 3; round++) {
    for (const [name, args] of chosen) {
      const busyBefore = machineBusySeconds();
      const ms = await timed('ssh', [...args, 'cat > /dev/null'], BYTES);
      const cpuPerGib = (machineBusySeconds() - busyBefore) / gib;
      samples[name]?.bulk.push(BYTES / 1024 / 1024 / (ms / 1000));
      samples[name]?.cpu.push(cpuPerGib);
      console.log(
        `bulk round ${round + 1}: ${name} ${(samples[name]?.bulk.at(-1) ?? 0).toFixed(1)} MiB/s, machine CPU ${cpuPerGib.toFixed(2)} s/GiB`,
      );
    }
  }
  for (const [name, args] of chosen) {
    const parallelStarted = performance.now();
    await Promise.all(Array.from({ length: 100 }, () => timed('ssh', [...args, 'true'])));
    const own = samples[name] as { connect: number[]; bulk: number[]; cpu: number[] };
    results[name] = {
      connectMs: median(own.connect),
      mibPerS: median(own.bulk),
      cpuSecondsPerGib: median(own.cpu),
      parallel100Ms: performance.now() - parallelStarted,
    };
    console.log(name, results[name]);
  }

  // Recording: PTY output of a command through the gateway, recording on vs off, alternated to share noise
  // (5 pairs: one run takes about 3 s, and a single slow spell of the store moves a median of 3).
  const ptyCmd = [
    ...gateway.slice(0, -1),
    '-tt',
    gateway.at(-1) as string,
    'head -c 64000000 /dev/zero | tr "\\0" x',
  ];
  const setRecording = (on: boolean) =>
    world.api('PUT', `/api/namespaces/${world.owner.tenant}`, { settings: { session_record: on } });
  const on: number[] = [];
  const off: number[] = [];
  for (let i = 0; i < 5; i++) {
    await setRecording(false);
    off.push(await timed('ssh', ptyCmd));
    await setRecording(true);
    on.push(await timed('ssh', ptyCmd));
    console.log(`recording pair ${i + 1}: off ${off.at(-1)?.toFixed(0)} ms, on ${on.at(-1)?.toFixed(0)} ms`);
  }
  const rec = { offMs: median(off), onMs: median(on) };
  console.log('recording', rec);

  if (only) {
    sshd.kill();
    await world.stop();
    process.exit(0);
  }
  const g = results.gateway as Record<string, number>;
  const d = results.direct as Record<string, number>;
  const j = results.jump as Record<string, number>;
  const fmt = (x: number) => x.toFixed(2);
  console.log('\n| figure | gateway | direct ssh | ssh -J | gateway/direct | gateway/-J |');
  console.log('|---|---|---|---|---|---|');
  console.log(
    `| bulk throughput, ${gib} GiB, median of 3 (MiB/s) | ${fmt(g.mibPerS as number)} | ${fmt(d.mibPerS as number)} | ${fmt(j.mibPerS as number)} | ${fmt((g.mibPerS as number) / (d.mibPerS as number))} | ${fmt((g.mibPerS as number) / (j.mibPerS as number))} |`,
  );
  console.log(
    `| machine CPU per GiB moved, median of 3 (s) | ${fmt(g.cpuSecondsPerGib as number)} | ${fmt(d.cpuSecondsPerGib as number)} | ${fmt(j.cpuSecondsPerGib as number)} | ${fmt((g.cpuSecondsPerGib as number) / (d.cpuSecondsPerGib as number))} | ${fmt((g.cpuSecondsPerGib as number) / (j.cpuSecondsPerGib as number))} |`,
  );
  console.log(
    `| \`ssh ... true\` to exit, median of 9 (ms) | ${fmt(g.connectMs as number)} | ${fmt(d.connectMs as number)} | ${fmt(j.connectMs as number)} | ${fmt((g.connectMs as number) / (d.connectMs as number))} | ${fmt((g.connectMs as number) / (j.connectMs as number))} |`,
  );
  console.log(
    `| 100 sessions in parallel, wall (ms) | ${fmt(g.parallel100Ms as number)} | ${fmt(d.parallel100Ms as number)} | ${fmt(j.parallel100Ms as number)} | ${fmt((g.parallel100Ms as number) / (d.parallel100Ms as number))} | ${fmt((g.parallel100Ms as number) / (j.parallel100Ms as number))} |`,
  );
  console.log(
    `\nrecording: 64 MB of PTY output, median of 5: off ${fmt(rec.offMs)} ms, on ${fmt(rec.onMs)} ms, cost ${fmt(((rec.onMs - rec.offMs) / rec.offMs) * 100)}%`,
  );

  sshd.kill();
  await world.stop();
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
