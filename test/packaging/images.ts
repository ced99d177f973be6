import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { agentImage, serverImage } from '../../packaging/release/images';
import type { Podman } from '../../packaging/release/podman';
import { baseSshOptions, run as runCommand } from '../integration/agent/openssh-client';
import { freePort } from '../support/process-server';
import { documented, filled } from './documented';
import { artifact, podmanFor, version } from './release';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The docs' quick start with the images, on a podman of its own that has only what the release folder holds: the
 * server image runs as its own user with its data in the volume, the first user is made with the image's own
 * `gatehouse` command, the agent image (the single executable, no Node.js) registers from its own network namespace,
 * and a person reaches it with OpenSSH through the server's gateway. Then `podman stop` ends both cleanly.
 */
describe('the server and agent images, as the getting-started page runs them', function () {
  this.timeout(300_000);
  let dir: string;
  let podman: Podman;
  let podmanEnv: Record<string, string>;
  let httpPort: number;
  let sshPort: number;
  let url: string;
  let token = '';

  /** A command of the docs with the test's ports, run as a shell would. */
  const sh = (command: string) =>
    execFileSync('sh', ['-c', command], {
      env: { ...process.env, ...podmanEnv },
      encoding: 'utf8',
      timeout: 240_000,
      cwd: path.dirname(artifact('x')),
    });
  const api = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(`${url}${p}`, {
      method,
      headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), 'Content-Type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  };
  const waitFor = async <T>(what: string, check: () => Promise<T | undefined>, ms = 90_000): Promise<T> => {
    const deadline = Date.now() + ms;
    for (;;) {
      const value = await check().catch(() => undefined);
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(500);
    }
  };

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-images-'));
    ({ podman, env: podmanEnv } = podmanFor(path.join(dir, 'podman')));
    [httpPort, sshPort] = [await freePort(), await freePort()];
    url = `http://127.0.0.1:${httpPort}`;
  });
  after(async () => {
    await podman?.('rm', '--force', '--time', '2', 'gatehouse', 'gatehouse-agent').catch(() => undefined);
    await podman?.('system', 'reset', '--force').catch(() => undefined);
    if (dir) rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  });

  it('loads the server image and serves this version as a non-root user with a health check', async () => {
    sh(documented.serverImageLoad);
    // With free ports of this machine in place of 8080 and 2222 (other tests may hold those).
    sh(
      filled(documented.serverImageRun, {
        '-p 8080:8080': `-p ${httpPort}:8080`,
        '-p 2222:2222': `-p ${sshPort}:2222`,
        'http://<server-host>:8080': url,
      }),
    );
    const info = await waitFor('the server', async () => {
      const res = await fetch(`${url}/info`);
      return res.ok ? ((await res.json()) as { version: string }) : undefined;
    });
    expect(info.version).to.equal(version);
    // The console and the docs' links come from the image itself.
    const home = await fetch(`${url}/`, { headers: { Accept: 'text/html' } });
    expect(home.status).to.equal(200);
    expect(await home.text()).to.include('<div id="root">');
    expect((await podman('exec', 'gatehouse', 'id', '-u')).trim()).to.equal('10001');
    expect(await podman('exec', 'gatehouse', 'gatehouse', '--version')).to.equal(version);
    await podman('healthcheck', 'run', 'gatehouse');
    const config = JSON.parse(await podman('image', 'inspect', serverImage(version))) as [
      { Config: { User: string; Volumes: Record<string, unknown>; Labels: Record<string, string> } },
    ];
    expect(config[0].Config.User).to.equal('10001:10001');
    expect(Object.keys(config[0].Config.Volumes)).to.deep.equal(['/var/lib/gatehouse']);
    expect(config[0].Config.Labels['org.opencontainers.image.version']).to.equal(version);
  });

  it('makes the first user and namespace with the gatehouse command inside the container, who signs in', async () => {
    sh(documented.firstUser);
    sh(documented.firstNamespace);
    const login = await api('POST', '/api/login', { username: 'ada', password: 'change-me-now' });
    expect(login.status).to.equal(200);
    token = String(login.body['token']);
    expect(login.body['tenant']).to.match(/^[0-9a-f-]{36}$/);
  });

  it('runs the agent image from its own network namespace, without Node.js, and ssh reaches it through the gateway', async () => {
    const tenant = String((await api('GET', '/api/auth/user')).body['tenant']);
    // The address the agent's container reaches the server's published port at: this host on podman's bridge.
    const network = JSON.parse(await podman('network', 'inspect', 'podman')) as [
      { subnets: { gateway: string }[] },
    ];
    const hostAddress = network[0].subnets[0]?.gateway;
    expect(hostAddress).to.match(/^\d+\.\d+\.\d+\.\d+$/);
    sh(documented.agentImageLoad);
    // With a hostname, so the device's name is known to the test.
    sh(
      filled(documented.agentImageRun, {
        '--restart unless-stopped': '--restart unless-stopped --hostname edge-1',
        'http://<server-host>:8080': `http://${hostAddress}:${httpPort}`,
        '<tenant-id>': tenant,
      }),
    );
    // The same image is the connector too (the console's connector command runs it so).
    const connectorHelp = await podman(
      'run',
      '--rm',
      '--network',
      'none',
      agentImage(version),
      'connector',
      '--help',
    );
    expect(connectorHelp).to.include('gatehouse-agent connector');
    // No Node.js in there: the executable carries its own.
    const which = await podman('exec', 'gatehouse-agent', 'sh', '-c', 'command -v node || echo none');
    expect(which).to.equal('none');
    const device = await waitFor('the agent to register', async () => {
      const list = await fetch(`${url}/api/devices?status=pending`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      const devices = (await list.json()) as {
        uid: string;
        name: string;
        info: { version: string; platform: string };
      }[];
      return devices.find((d) => d.name === 'edge-1');
    });
    expect(device.info.version).to.equal(version);
    expect(device.info.platform).to.equal('docker');
    expect(sh('podman logs gatehouse-agent 2>&1')).to.include(`gatehouse-agent ${version} starting`);
    expect((await api('PATCH', `/api/devices/${device.uid}/accept`)).status).to.equal(200);
    await waitFor('the device online', async () => {
      const one = await api('GET', `/api/devices/${device.uid}`);
      return one.body['online'] === true ? true : undefined;
    });

    const keyFile = path.join(dir, 'person_ed25519');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'person', '-f', keyFile]);
    const added = await api('POST', '/api/sshkeys/public-keys', {
      name: 'person',
      data: readFileSync(`${keyFile}.pub`).toString('base64'),
      username: '.*',
      filter: { hostname: '.*' },
    });
    expect(added.status, JSON.stringify(added.body)).to.equal(200);
    const [, ...sshArgs] = filled(documented.ssh, {
      '-p 2222': `-p ${sshPort}`,
      '<device-name>': 'edge-1',
      '<server-host>': '127.0.0.1',
    }).split(' ');
    const session = await runCommand('ssh', [
      ...baseSshOptions(sshPort),
      '-o',
      'BatchMode=yes',
      '-o',
      'IdentitiesOnly=yes',
      '-i',
      keyFile,
      ...sshArgs,
      'echo inside-the-agent-container; hostname',
    ]);
    expect(session.code, `${session.stderr}\n${sh('podman logs --tail 20 gatehouse 2>&1')}`).to.equal(0);
    expect(session.stdout).to.equal('inside-the-agent-container\nedge-1\n');
  });

  it('stops both cleanly on podman stop, and the server keeps its data in the volume for the next start', async () => {
    for (const name of ['gatehouse-agent', 'gatehouse']) {
      const started = Date.now();
      await podman('stop', '--time', '20', name);
      expect(Date.now() - started, `${name} stopped by SIGTERM, not killed`).to.be.below(15_000);
      expect(await podman('inspect', name, '--format', '{{.State.ExitCode}}')).to.equal('0');
    }
    await podman('start', 'gatehouse');
    await waitFor('the server again', async () => ((await fetch(`${url}/readyz`)).ok ? true : undefined));
    expect((await api('POST', '/api/login', { username: 'ada', password: 'change-me-now' })).status).to.equal(
      200,
    );
  });
});
