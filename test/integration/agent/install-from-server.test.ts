import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { architecture } from '../../../agent/identity';
import {
  bundleFileName,
  executableFileName,
  installScriptPath,
  serviceFilePaths,
} from '../../../agent/packaging/bundle';
import { AGENT_VERSION } from '../../../agent/version';
import { GatehouseServer } from './gatehouse-server';
import { run } from './openssh-client';

const agentDir = fileURLToPath(new URL('../../../agent/', import.meta.url));
const arch = architecture();

/**
 * The one-line install of the docs, run as written against a real server: the server hands out install.sh and the
 * agent executable it built, the installed agent (the executable, with no Node.js on its PATH) registers, is
 * accepted through the API, and a person signs in to it over ssh through the server's gateway.
 */
describe('installing the agent from the server with the documented command (pending unless root: it installs system files)', function () {
  this.timeout(180_000);
  let root: string;
  let server: GatehouseServer;
  let installed: ChildProcess | undefined;
  let log = '';

  before(async function () {
    if (process.getuid?.() !== 0) {
      // The documented command installs system files; CI runs it as root.
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

  it('serves install.sh, the executable and the bundle it built, the service files, and says clearly when a build is missing', async () => {
    const script = await fetch(`${server.url}/agent/install.sh`);
    expect(script.status).to.equal(200);
    expect(script.headers.get('content-type')).to.match(/^text\/x-shellscript/);
    expect(await script.text()).to.equal(readFileSync(installScriptPath, 'utf8'));

    for (const [file, type] of [
      [bundleFileName(arch), 'application/gzip'],
      [executableFileName(arch), 'application/octet-stream'],
    ] as const) {
      const build = await fetch(`${server.url}/agent/${file}`);
      expect(build.status, file).to.equal(200);
      expect(build.headers.get('content-type')).to.equal(type);
      // Sent as stored, though the client (fetch) accepts gzip: no server CPU spent per anonymous download.
      expect(build.headers.get('content-encoding'), file).to.equal(null);
      expect(Number(build.headers.get('content-length')), file).to.equal(
        statSync(join(agentDir, 'dist', file)).size,
      );
      const bytes = Buffer.from(await build.arrayBuffer());
      expect(bytes.equals(readFileSync(join(agentDir, 'dist', file))), file).to.equal(true);
    }
    for (const [init, path] of Object.entries(serviceFilePaths)) {
      const unit = await fetch(`${server.url}/agent/gatehouse-agent.${init}`);
      expect(unit.status).to.equal(200);
      expect(await unit.text()).to.equal(readFileSync(path, 'utf8'));
    }
    expect((await fetch(`${server.url}/agent/gatehouse-agent.upstart`)).status).to.equal(400);

    // The build makes this machine's architecture only.
    const other = arch === 'amd64' ? 'arm64' : 'amd64';
    const missing = await fetch(`${server.url}/agent/${bundleFileName(other)}`);
    expect(missing.status).to.equal(404);
    expect((await missing.json()).message).to.equal(
      `${bundleFileName(other)} is not built on this server: run "npm run build -w agent" in the server's checkout`,
    );
    const missingExecutable = await fetch(`${server.url}/agent/${executableFileName(other)}`);
    expect(missingExecutable.status).to.equal(404);
    expect((await missingExecutable.json()).message).to.equal(
      `${executableFileName(other)} is not built on this server: run "npm run release" in the server's checkout`,
    );
    const unknown = await fetch(`${server.url}/agent/gatehouse-agent-linux-sparc.tar.gz`);
    expect(unknown.status).to.equal(400);
    expect((await fetch(`${server.url}/agent/gatehouse-agent-linux-sparc`)).status).to.equal(400);

    // Both are in the OpenAPI document, public.
    const paths = (
      server.kernel.openapi() as { paths: Record<string, Record<string, { security: unknown }>> }
    ).paths;
    expect(paths['/agent/install.sh']?.['get']?.security).to.deep.equal([{}]);
    expect(paths['/agent/gatehouse-agent-linux-{arch}.tar.gz']?.['get']?.security).to.deep.equal([{}]);
    expect(paths['/agent/gatehouse-agent-linux-{arch}']?.['get']?.security).to.deep.equal([{}]);
    expect(paths['/agent/gatehouse-agent.{init}']?.['get']?.security).to.deep.equal([{}]);
  });

  it('installs with the documented command as root without sudo, and the installed executable is reached over ssh through the gateway', async () => {
    // docs: curl -fsSL "$SERVER/agent/install.sh" | GATEHOUSE_SERVER_ADDRESS="$SERVER" GATEHOUSE_TENANT_ID=<tenant> sh
    // with the script's own staging settings, so that the test installs under a temporary root and starts nothing.
    const command =
      'curl -fsSL "$SERVER/agent/install.sh" | GATEHOUSE_SERVER_ADDRESS="$SERVER" ' +
      'GATEHOUSE_TENANT_ID="$TENANT" GATEHOUSE_INSTALL_ROOT="$STAGING" GATEHOUSE_NO_SYSTEMD=1 GATEHOUSE_INIT=systemd sh';
    // A machine without sudo: the one on PATH fails loudly if anything calls it.
    const noSudo = join(root, 'no-sudo');
    mkdirSync(noSudo);
    writeFileSync(join(noSudo, 'sudo'), '#!/bin/sh\necho "sudo: command not found" >&2\nexit 127\n');
    chmodSync(join(noSudo, 'sudo'), 0o755);
    const install = await run('sh', ['-c', command], {
      env: {
        SERVER: server.url,
        TENANT: server.tenantId,
        STAGING: root,
        PATH: `${noSudo}:${process.env['PATH'] ?? '/usr/bin:/bin'}`,
      },
      timeoutMs: 60_000,
    });
    expect(install.code, install.stderr).to.equal(0);
    expect(install.stdout).to.include(
      `installed into ${root} (systemd service files written, nothing started)`,
    );

    const envFile = join(root, 'etc/default/gatehouse-agent');
    expect(statSync(envFile).mode & 0o777).to.equal(0o600);
    const settings = readFileSync(envFile, 'utf8');
    expect(settings).to.equal(
      `GATEHOUSE_SERVER_ADDRESS=${server.url}\nGATEHOUSE_TENANT_ID=${server.tenantId}\n` +
        'GATEHOUSE_PRIVATE_KEY=/var/lib/gatehouse-agent/agent.key\n',
    );
    expect(readFileSync(join(root, 'etc/systemd/system/gatehouse-agent.service'), 'utf8')).to.equal(
      readFileSync(serviceFilePaths.service, 'utf8'),
    );
    const entry = join(root, 'usr/local/bin/gatehouse-agent');
    expect(
      readFileSync(entry).equals(readFileSync(join(agentDir, 'dist', executableFileName(arch)))),
    ).to.equal(true);
    // The installer's own first run unpacked the runtime beside the key, with ssh2's native crypto binding (without
    // it ssh2 silently runs several times slower).
    const runtime = join(root, 'var/lib/gatehouse-agent/runtime');
    expect(execFileSync('find', [runtime, '-name', 'sshcrypto.node'], { encoding: 'utf8' }).trim()).to.match(
      /ssh2\/lib\/protocol\/crypto\/build\/Release\/sshcrypto\.node$/,
    );

    // Run what was installed as the unit would (its settings file), with no Node.js on PATH.
    const path = '/usr/sbin:/sbin';
    expect(
      execFileSync('/bin/sh', ['-c', 'command -v node || echo none'], {
        env: { PATH: path },
        encoding: 'utf8',
      }).trim(),
    ).to.equal('none');
    const unitEnv = Object.fromEntries(
      settings
        .trim()
        .split('\n')
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    );
    expect(
      execFileSync(entry, ['--version'], {
        env: { PATH: path, GATEHOUSE_AGENT_RUNTIME_DIR: runtime },
        encoding: 'utf8',
      }).trim(),
    ).to.equal(AGENT_VERSION);
    installed = spawn(entry, [], {
      cwd: root,
      env: {
        PATH: path,
        HOME: '/root',
        ...unitEnv,
        GATEHOUSE_AGENT_RUNTIME_DIR: runtime,
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
    expect(log).to.include(`gatehouse-agent ${AGENT_VERSION} starting`);
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

  it('with OpenRC installs its service script, and with no init system says how to run the agent, which then runs', async () => {
    // Into staging roots, the device key in each (the settings file names it).
    const staged = (init: string, into: string, extra = '') =>
      run(
        'sh',
        [
          '-c',
          'curl -fsSL "$SERVER/agent/install.sh" | GATEHOUSE_SERVER_ADDRESS="$SERVER" GATEHOUSE_TENANT_ID="$TENANT" ' +
            `GATEHOUSE_INSTALL_ROOT="${into}" GATEHOUSE_INIT=${init} GATEHOUSE_PRIVATE_KEY="${into}/agent.key" ${extra} sh`,
        ],
        { env: { SERVER: server.url, TENANT: server.tenantId }, timeoutMs: 60_000 },
      );
    const openrcRoot = join(root, 'openrc');
    // No OpenRC on this machine to start it with: the files only.
    const openrc = await staged('openrc', openrcRoot, 'GATEHOUSE_NO_SYSTEMD=1');
    expect(openrc.code, openrc.stderr).to.equal(0);
    expect(openrc.stdout).to.include('(openrc service files written, nothing started)');
    const script = join(openrcRoot, 'etc/init.d/gatehouse-agent');
    expect(readFileSync(script, 'utf8'), openrc.stderr).to.equal(
      readFileSync(serviceFilePaths.openrc, 'utf8'),
    );
    expect(statSync(script).mode & 0o777).to.equal(0o755);
    expect(execFileSync('sh', ['-n', script]).toString()).to.equal('');
    expect(existsSync(join(openrcRoot, 'etc/systemd'))).to.equal(false);

    const bareRoot = join(root, 'bare');
    const bare = await staged('none', bareRoot);
    expect(bare.code, bare.stderr).to.equal(0);
    const said = "  sh -c 'set -a; . /etc/default/gatehouse-agent; exec /usr/local/bin/gatehouse-agent'";
    expect(bare.stdout).to.include('no systemd or OpenRC here, so start it yourself');
    expect(bare.stdout.split('\n')).to.include(said);
    expect(existsSync(join(bareRoot, 'etc/systemd'))).to.equal(false);
    expect(existsSync(join(bareRoot, 'etc/init.d'))).to.equal(false);
    // The command it printed, with the staging root's paths, starts an agent that registers.
    const command = said
      .trim()
      .replace('/etc/default/gatehouse-agent', join(bareRoot, 'etc/default/gatehouse-agent'))
      .replace('/usr/local/bin/gatehouse-agent', join(bareRoot, 'usr/local/bin/gatehouse-agent'));
    const agent = spawn('sh', ['-c', command], {
      env: {
        PATH: '/usr/sbin:/usr/bin:/sbin:/bin',
        GATEHOUSE_AGENT_RUNTIME_DIR: join(bareRoot, 'var/lib/gatehouse-agent/runtime'),
        GATEHOUSE_PREFERRED_HOSTNAME: 'no-init',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log2 = '';
    agent.stderr?.on('data', (c: Buffer) => {
      log2 += c.toString();
    });
    try {
      const deadline = Date.now() + 30_000;
      while (!/device [0-9a-f]{64} is pending/.test(log2)) {
        if (agent.exitCode !== null || Date.now() > deadline)
          throw new Error(`the agent did not register:\n${log2}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    } finally {
      agent.kill('SIGTERM');
      await new Promise((resolve) => agent.once('exit', resolve));
    }
  });

  it('starts (or, run again, restarts) the agent with systemctl or rc-service, and with nothing else', async () => {
    // The init systems' commands as stand-ins that record what they were asked: this machine runs neither.
    const bin = join(root, 'init-bin');
    mkdirSync(bin, { recursive: true });
    const calls = join(root, 'init-calls');
    for (const tool of ['systemctl', 'rc-update', 'rc-service']) {
      writeFileSync(
        join(bin, tool),
        `#!/bin/sh\necho "${tool} $*" >> ${calls}\n[ "$2" != "status" ] || exit 3\n`,
      );
      chmodSync(join(bin, tool), 0o755);
    }
    for (const init of ['systemd', 'openrc']) {
      const into = join(root, `started-${init}`);
      const install = await run(
        'sh',
        [
          '-c',
          'curl -fsSL "$SERVER/agent/install.sh" | GATEHOUSE_SERVER_ADDRESS="$SERVER" GATEHOUSE_TENANT_ID="$TENANT" ' +
            `GATEHOUSE_INSTALL_ROOT="${into}" GATEHOUSE_INIT=${init} GATEHOUSE_PRIVATE_KEY="${into}/agent.key" sh`,
        ],
        {
          env: {
            SERVER: server.url,
            TENANT: server.tenantId,
            PATH: `${bin}:${process.env['PATH'] ?? '/usr/bin:/bin'}`,
          },
          timeoutMs: 60_000,
        },
      );
      expect(install.code, install.stderr).to.equal(0);
      expect(install.stdout).to.include('gatehouse-agent installed and started');
    }
    expect(readFileSync(calls, 'utf8')).to.equal(
      [
        'systemctl daemon-reload',
        'systemctl enable gatehouse-agent.service',
        'systemctl restart gatehouse-agent.service',
        'rc-update add gatehouse-agent default',
        'rc-service gatehouse-agent status',
        'rc-service gatehouse-agent start',
        '',
      ].join('\n'),
    );
  });
});
