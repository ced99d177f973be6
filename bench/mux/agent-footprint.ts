/**
 * What the agent costs on a device: install size, and resident memory of the built agent
 * idle online (tunnel up, pinging), then after an SSH session has come and gone.
 *
 *   npx tsx bench/mux/agent-footprint.ts
 *
 * Builds agent/dist first; the server end is a real Gatehouse server (the agent tests' GatehouseServer).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AGENT_NODE_FLAGS } from '../../agent/node-flags';
import { GatehouseServer } from '../../test/integration/agent/gatehouse-server';
import { baseSshOptions, runWithPassword } from '../../test/integration/agent/openssh-client';
import { AgentProcess } from '../../test/support/agent-process';
import { passwordOptions } from '../../test/support/openssh';

const agentDir = fileURLToPath(new URL('../../agent/', import.meta.url));
execFileSync(process.execPath, ['--import', 'tsx', join(agentDir, 'build.ts')], {
  cwd: agentDir,
  stdio: 'ignore',
});
const tree = join(agentDir, 'dist', 'gatehouse-agent');
const installKiB = Number(execFileSync('du', ['-sk', tree], { encoding: 'utf8' }).split('\t')[0]);
const tarball = execFileSync('sh', ['-c', `du -k ${join(agentDir, 'dist')}/*.tar.gz`], { encoding: 'utf8' });
const tarballKiB = Number(tarball.split('\t')[0]);

const server = await GatehouseServer.start();
const dir = mkdtempSync(join(tmpdir(), 'gatehouse-footprint-'));
// As the systemd unit runs it (agent/node-flags.ts); AGENT_NODE_FLAGS replaces the options ("" for none).
const nodeFlags = (process.env['AGENT_NODE_FLAGS'] ?? AGENT_NODE_FLAGS.join(' ')).split(' ').filter(Boolean);
const agent = new AgentProcess(
  {
    HOME: dir,
    GATEHOUSE_SERVER_ADDRESS: server.url,
    GATEHOUSE_TENANT_ID: server.tenantId,
    GATEHOUSE_PRIVATE_KEY: join(dir, 'agent.key'),
    GATEHOUSE_SINGLE_USER_PASSWORD: 'footprint',
    GATEHOUSE_KEEPALIVE_INTERVAL: '30',
  },
  [],
  {
    bundle: { path: join(tree, 'gatehouse-agent.mjs'), nodeArgs: nodeFlags },
    output: { stdout: 'ignore', stderr: 'ignore' },
  },
);
const child = agent.child;
const rssKiB = () =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? Number.NaN);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let uid: string | undefined;
while (!uid) {
  await sleep(100);
  uid =
    server.authCalls.length > 0
      ? (await server.api('GET', '/api/devices?status=pending')).body[0]?.uid
      : undefined;
}
await server.setStatus(uid, 'accept');
await server.waitOnline(uid);
await sleep(10_000);
const idle = rssKiB();
const port = await server.sshPort(uid);
const session = await runWithPassword('footprint', 'ssh', [
  ...baseSshOptions(port),
  ...passwordOptions(),
  'root@127.0.0.1',
  'true',
]);
if (session.code !== 0) throw new Error(`ssh failed: ${session.stderr}`);
await sleep(5_000);
const afterSession = rssKiB();

console.log(`Node ${process.version}, ${process.arch}, agent node flags: ${nodeFlags.join(' ') || 'none'}`);
console.log(
  `install tree ${(installKiB / 1024).toFixed(1)} MiB on disk, tarball ${(tarballKiB / 1024).toFixed(2)} MiB`,
);
console.log(
  `RSS idle online ${(idle / 1024).toFixed(1)} MiB, after one SSH session ${(afterSession / 1024).toFixed(1)} MiB`,
);
await agent.stop();
await server.stop();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
