/**
 * The agent's memory on a device, today's agent (the Node.js bundle under the distribution's node, as the systemd
 * unit ran it) against the single executable, in one run against one real Gatehouse server with its SSH gateway:
 * resident size idle (tunnel up, 10 s after it came online) and the highest during a 1 GiB upload through the
 * gateway (`head -c 1G /dev/zero | ssh ... 'cat > /dev/null'`), sampled every 100 ms from /proc, with the agent's
 * CPU time for that upload. The bundle without its Node.js option shows what the option saves, and whether the
 * executable, which sets it itself at start, gets the saving.
 *
 *   node --import tsx bench/agents/memory.ts
 *
 * Builds agent/dist and the executable first. Both agents run as root in single-user mode with a password.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AGENT_NODE_FLAGS } from '../../agent/node-flags';
import { executableFileName } from '../../agent/packaging/bundle';
import { GatehouseServer } from '../../test/integration/agent/gatehouse-server';
import { baseSshOptions } from '../../test/integration/agent/openssh-client';
import { passwordOptions } from '../../test/support/openssh';

const agentDir = fileURLToPath(new URL('../../agent/', import.meta.url));
const build = (script: string) =>
  execFileSync(process.execPath, ['--import', 'tsx', join(agentDir, script)], {
    cwd: agentDir,
    stdio: 'ignore',
  });
build('build.ts');
build('build-executable.ts');
const bundle = join(agentDir, 'dist', 'gatehouse-agent', 'gatehouse-agent.mjs');
const executable = join(agentDir, 'dist', executableFileName('amd64'));

const PASSWORD = 'memory-bench';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const server = await GatehouseServer.start({ ssh: true });

interface Figures {
  idleRss: number;
  idleAnon: number;
  copyPeakRss: number;
  copyPeakAnon: number;
  copySeconds: number;
  /** The agent's user + system CPU seconds during the upload. */
  copyCpu: number;
}

/** User + system CPU seconds of a process so far (/proc/<pid>/stat, in clock ticks of 1/100 s). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function memory(pid: number): { rss: number; anon: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? Number.NaN);
  return { rss: kib('VmRSS') / 1024, anon: kib('RssAnon') / 1024 };
}

async function measure(name: string, command: string, args: string[]): Promise<Figures> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-memory-'));
  const child: ChildProcess = spawn(command, args, {
    env: {
      PATH: '/usr/sbin:/usr/bin:/sbin:/bin',
      HOME: dir,
      GATEHOUSE_SERVER_ADDRESS: server.url,
      GATEHOUSE_TENANT_ID: server.tenantId,
      GATEHOUSE_PRIVATE_KEY: join(dir, 'agent.key'),
      GATEHOUSE_PREFERRED_HOSTNAME: name,
      GATEHOUSE_SINGLE_USER_PASSWORD: PASSWORD,
      GATEHOUSE_AGENT_RUNTIME_DIR: join(dir, 'runtime'),
    },
    stdio: 'ignore',
  });
  try {
    let uid: string | undefined;
    while (!uid) {
      await sleep(200);
      const pending = (await server.api('GET', '/api/devices?status=pending')).body as {
        uid: string;
        name: string;
      }[];
      uid = pending.find((d) => d.name === name)?.uid;
    }
    await server.setStatus(uid, 'accept');
    await server.waitOnline(uid);
    await sleep(10_000);
    const idle = memory(child.pid as number);
    let peak = { ...idle };
    const sampler = setInterval(() => {
      const now = memory(child.pid as number);
      peak = { rss: Math.max(peak.rss, now.rss), anon: Math.max(peak.anon, now.anon) };
    }, 100);
    const ssh = [
      'sshpass',
      '-e',
      'ssh',
      ...baseSshOptions(server.kernel.sshPort),
      ...passwordOptions(),
      `root@ada.${name}@127.0.0.1`,
      "'cat > /dev/null'",
    ].join(' ');
    const started = performance.now();
    const cpuBefore = cpuSeconds(child.pid as number);
    // Not a synchronous child: the server runs in this process and must go on answering.
    const copy = spawn('sh', ['-c', `head -c 1073741824 /dev/zero | ${ssh}`], {
      env: { ...process.env, SSHPASS: PASSWORD },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const code = await new Promise<number | null>((resolve) => copy.once('exit', resolve));
    if (code !== 0) throw new Error(`the upload through the gateway failed (${code})`);
    const copySeconds = (performance.now() - started) / 1000;
    const copyCpu = cpuSeconds(child.pid as number) - cpuBefore;
    clearInterval(sampler);
    return {
      idleRss: idle.rss,
      idleAnon: idle.anon,
      copyPeakRss: peak.rss,
      copyPeakAnon: peak.anon,
      copySeconds,
      copyCpu,
    };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    rmSync(dir, { recursive: true, force: true });
  }
}

const rows: [string, Figures][] = [
  [
    `today: node ${AGENT_NODE_FLAGS.join(' ')} bundle`,
    await measure('bundle', process.execPath, [...AGENT_NODE_FLAGS, bundle]),
  ],
  ['node bundle without the option', await measure('bare', process.execPath, [bundle])],
  ['single executable', await measure('executable', executable, [])],
];
await server.stop();

const mib = (n: number) => n.toFixed(1);
console.log(
  `Node ${process.version}, ${process.arch}; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}`,
);
console.log(
  '| agent | RSS idle | of it anonymous | RSS peak, 1 GiB upload | anonymous peak | upload s | agent CPU s |',
);
console.log('|---|---|---|---|---|---|---|');
for (const [label, f] of rows) {
  console.log(
    `| ${label} | ${mib(f.idleRss)} MiB | ${mib(f.idleAnon)} MiB | ${mib(f.copyPeakRss)} MiB | ${mib(f.copyPeakAnon)} MiB | ${f.copySeconds.toFixed(1)} | ${f.copyCpu.toFixed(1)} |`,
  );
}
process.exit(0);
