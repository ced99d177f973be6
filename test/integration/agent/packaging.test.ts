import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { ContractServer } from './contract-server';
import { baseSshOptions, passwordOptions, runWithPassword } from './openssh-client';

const agentDir = fileURLToPath(new URL('../../../agent/', import.meta.url));

describe('the installable agent: bundle, tarball and install.sh', function () {
  this.timeout(120_000);
  let root: string;
  let server: ContractServer;

  before(async () => {
    execFileSync(process.execPath, ['--import', 'tsx', join(agentDir, 'build.ts')], { cwd: agentDir });
    server = await ContractServer.start();
    root = mkdtempSync(join(tmpdir(), 'gatehouse-install-'));
  });
  after(async () => {
    await server?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('installs from the tarball and the installed agent registers and serves ssh', async () => {
    const tarball = join(agentDir, 'dist', 'gatehouse-agent-linux-amd64.tar.gz');
    expect(existsSync(tarball)).to.equal(process.arch === 'x64');
    if (process.arch !== 'x64') return;
    execFileSync('sh', [join(agentDir, 'packaging', 'install.sh')], {
      env: {
        ...process.env,
        GATEHOUSE_SERVER_ADDRESS: server.url,
        GATEHOUSE_TENANT_ID: server.tenantId,
        GATEHOUSE_SINGLE_USER_PASSWORD: 'installed pw',
        GATEHOUSE_KEEPALIVE_INTERVAL: '1',
        GATEHOUSE_AGENT_TARBALL: tarball,
        GATEHOUSE_INSTALL_ROOT: root,
        GATEHOUSE_NO_SYSTEMD: '1',
      },
    });
    const envFile = join(root, 'etc/default/gatehouse-agent');
    expect(statSync(envFile).mode & 0o777).to.equal(0o600);
    const settings = readFileSync(envFile, 'utf8');
    expect(settings).to.include(`GATEHOUSE_TENANT_ID=${server.tenantId}\n`);
    expect(settings).to.include('GATEHOUSE_PRIVATE_KEY=/var/lib/gatehouse-agent/agent.key\n');
    expect(readFileSync(join(root, 'etc/systemd/system/gatehouse-agent.service'), 'utf8')).to.include(
      'ExecStart=/usr/bin/env node /opt/gatehouse-agent/gatehouse-agent.mjs',
    );

    // Run what was installed, from its install tree (no access to the checkout's node_modules).
    const installed = join(root, 'opt/gatehouse-agent/gatehouse-agent.mjs');
    expect(execFileSync(process.execPath, [installed, '--version'], { encoding: 'utf8' }).trim()).to.equal(
      '0.1.0',
    );
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, [installed], {
      cwd: root,
      env: {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        HOME: process.env['HOME'] ?? '/root',
        ...Object.fromEntries(
          settings
            .trim()
            .split('\n')
            .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
        ),
        GATEHOUSE_PRIVATE_KEY: join(root, 'var/lib/gatehouse-agent/agent.key'),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let log = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      log += chunk;
    });
    try {
      for (let i = 0; i < 100 && server.devices.size === 0; i++) await new Promise((r) => setTimeout(r, 100));
      const uid = [...server.devices.keys()][0];
      expect(uid, log).to.be.a('string');
      const online = server.nextTunnel();
      server.setStatus(uid!, 'accepted');
      await online;
      const port = await server.sshPort(uid!);
      const result = await runWithPassword('installed pw', 'ssh', [
        ...baseSshOptions(port),
        ...passwordOptions(),
        'root@127.0.0.1',
        'echo from-the-installed-agent',
      ]);
      expect(result.stdout.trim(), result.stderr + log).to.equal('from-the-installed-agent');
      // The native crypto binding of ssh2 is loaded from the install tree, not left out.
      expect(
        existsSync(
          join(
            root,
            'opt/gatehouse-agent/node_modules/ssh2/lib/protocol/crypto/build/Release/sshcrypto.node',
          ),
        ),
      ).to.equal(true);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  });
});
