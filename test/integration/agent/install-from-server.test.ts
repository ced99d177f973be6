import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { architecture } from '../../../agent/identity';
import { AGENT_NODE_FLAGS } from '../../../agent/node-flags';
import { bundleFileName, installScriptPath } from '../../../agent/packaging/bundle';
import { AGENT_VERSION } from '../../../agent/version';
import { GatehouseServer } from './gatehouse-server';
import { run } from './openssh-client';

const agentDir = fileURLToPath(new URL('../../../agent/', import.meta.url));
const arch = architecture();

/**
 * The one-line install of the docs, run as written against a real server: the server hands out install.sh and the
 * agent tarball it built, the installed agent (from its install tree, not this checkout) registers, is accepted
 * through the API, and a person signs in to it over ssh through the server's gateway.
 */
describe('installing the agent from the server with the documented command (pending unless root with sudo: it installs system files)', function () {
  this.timeout(180_000);
  let root: string;
  let server: GatehouseServer;
  let installed: ChildProcess | undefined;
  let log = '';

  before(async function () {
    if (process.getuid?.() !== 0 || !existsSync('/usr/bin/sudo')) {
      // The documented command pipes into sudo and installs system files; CI runs it as root with sudo present.
      this.skip();
    }
    // The bundle under test is this checkout's: the suite's global setup (test/support/global-setup.ts) built it.
    server = await GatehouseServer.start({ ssh: true });
    root = mkdtempSync(join(tmpdir(), 'gatehouse-install-'));
  });
  after(async () => {
    if (installed && installed.exitCode === null && installed.signalCode === null) {
      installed.kill('SIGTERM');
      await new Promise((resolve) => installed?.once('exit', resolve));
    }
    await server?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('serves install.sh and the bundle it built, and says clearly when a bundle was not built', async () => {
    const script = await fetch(`${server.url}/agent/install.sh`);
    expect(script.status).to.equal(200);
    expect(script.headers.get('content-type')).to.match(/^text\/x-shellscript/);
    expect(await script.text()).to.equal(readFileSync(installScriptPath, 'utf8'));

    const bundle = await fetch(`${server.url}/agent/${bundleFileName(arch)}`);
    expect(bundle.status).to.equal(200);
    expect(bundle.headers.get('content-type')).to.equal('application/gzip');
    const bytes = Buffer.from(await bundle.arrayBuffer());
    expect(bytes.equals(readFileSync(join(agentDir, 'dist', bundleFileName(arch))))).to.equal(true);

    // The build makes this machine's architecture only.
    const other = arch === 'amd64' ? 'arm64' : 'amd64';
    const missing = await fetch(`${server.url}/agent/${bundleFileName(other)}`);
    expect(missing.status).to.equal(404);
    expect((await missing.json()).message).to.equal(
      `${bundleFileName(other)} is not built on this server: run "npm run build -w agent" in the server's checkout`,
    );
    const unknown = await fetch(`${server.url}/agent/gatehouse-agent-linux-sparc.tar.gz`);
    expect(unknown.status).to.equal(400);

    // Both are in the OpenAPI document, public.
    const paths = (
      server.kernel.openapi() as { paths: Record<string, Record<string, { security: unknown }>> }
    ).paths;
    expect(paths['/agent/install.sh']?.['get']?.security).to.deep.equal([{}]);
    expect(paths['/agent/gatehouse-agent-linux-{arch}.tar.gz']?.['get']?.security).to.deep.equal([{}]);
  });

  it('installs with the documented command, and the installed agent is reached over ssh through the gateway', async () => {
    // docs: curl -fsSL "$SERVER/agent/install.sh" | sudo GATEHOUSE_SERVER_ADDRESS="$SERVER" GATEHOUSE_TENANT_ID=<tenant> sh
    // with the script's own staging settings, so that the test installs under a temporary root without systemd.
    const command =
      'curl -fsSL "$SERVER/agent/install.sh" | sudo GATEHOUSE_SERVER_ADDRESS="$SERVER" ' +
      'GATEHOUSE_TENANT_ID="$TENANT" GATEHOUSE_INSTALL_ROOT="$STAGING" GATEHOUSE_NO_SYSTEMD=1 sh';
    const install = await run('sh', ['-c', command], {
      env: { SERVER: server.url, TENANT: server.tenantId, STAGING: root },
      timeoutMs: 60_000,
    });
    expect(install.code, install.stderr).to.equal(0);
    expect(install.stdout).to.include(`installed into ${root}`);

    const envFile = join(root, 'etc/default/gatehouse-agent');
    expect(statSync(envFile).mode & 0o777).to.equal(0o600);
    const settings = readFileSync(envFile, 'utf8');
    expect(settings).to.equal(
      `GATEHOUSE_SERVER_ADDRESS=${server.url}\nGATEHOUSE_TENANT_ID=${server.tenantId}\n` +
        'GATEHOUSE_PRIVATE_KEY=/var/lib/gatehouse-agent/agent.key\n',
    );
    expect(readFileSync(join(root, 'etc/systemd/system/gatehouse-agent.service'), 'utf8')).to.include(
      `ExecStart=/usr/bin/env node ${AGENT_NODE_FLAGS.join(' ')} /opt/gatehouse-agent/gatehouse-agent.mjs`,
    );
    // ssh2's native crypto binding came along; without it ssh2 silently runs several times slower.
    expect(
      existsSync(
        join(root, 'opt/gatehouse-agent/node_modules/ssh2/lib/protocol/crypto/build/Release/sshcrypto.node'),
      ),
    ).to.equal(true);

    // Run what was installed as the unit would (its settings file), from its own tree: no checkout modules.
    const entry = join(root, 'opt/gatehouse-agent/gatehouse-agent.mjs');
    expect(execFileSync(process.execPath, [entry, '--version'], { encoding: 'utf8' }).trim()).to.equal(
      AGENT_VERSION,
    );
    const unitEnv = Object.fromEntries(
      settings
        .trim()
        .split('\n')
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    );
    installed = spawn(process.execPath, [...AGENT_NODE_FLAGS, entry], {
      cwd: root,
      env: {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        HOME: '/root',
        ...unitEnv,
        GATEHOUSE_KEEPALIVE_INTERVAL: '1',
        GATEHOUSE_PRIVATE_KEY: join(root, 'var/lib/gatehouse-agent/agent.key'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const uidSeen = new Promise<string>((resolve) => {
      const take = (chunk: Buffer) => {
        log += chunk.toString('utf8');
        const uid = /device ([0-9a-f]{64}) is pending/.exec(log)?.[1];
        if (uid) resolve(uid);
      };
      installed?.stdout?.on('data', take);
      installed?.stderr?.on('data', take);
    });
    const uid = await Promise.race([
      uidSeen,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error(`the installed agent did not register:\n${log}`)), 30_000),
      ),
    ]);
    // Started with the unit's node options, it has no note about them.
    expect(log).to.not.include('node was started without');
    await server.setStatus(uid, 'accept');
    await server.waitOnline(uid);
    const name = String((await server.device(uid))['name']);

    // A person's key, registered in the namespace, signs in to the device's root account through the gateway.
    const keyFile = join(root, 'person_ed25519');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'person', '-f', keyFile]);
    const added = await server.api('POST', '/api/sshkeys/public-keys', {
      name: 'person',
      data: readFileSync(`${keyFile}.pub`).toString('base64'),
      username: '.*',
      filter: { hostname: '.*' },
    });
    expect(added.status, JSON.stringify(added.body)).to.equal(200);
    const session = await run('ssh', [
      '-F',
      '/dev/null',
      '-o',
      'StrictHostKeyChecking=no',
      '-o',
      'UserKnownHostsFile=/dev/null',
      '-o',
      'LogLevel=ERROR',
      '-o',
      'BatchMode=yes',
      '-o',
      'IdentitiesOnly=yes',
      '-i',
      keyFile,
      '-p',
      String(server.kernel.sshPort),
      `root@ada.${name}@127.0.0.1`,
      'echo from-the-installed-agent; id -un',
    ]);
    expect(session.code, session.stderr + log).to.equal(0);
    expect(session.stdout).to.equal('from-the-installed-agent\nroot\n');
  });
});
