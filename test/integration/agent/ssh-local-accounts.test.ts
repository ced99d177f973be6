import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { AgentProcess } from '../../support/agent-process';
import { passwordOptions } from '../../support/openssh';
import { GatehouseServer } from './gatehouse-server';
import { baseSshOptions, run, runWithPassword } from './openssh-client';

/** Real accounts made by Debian's own tools: chpasswd writes the hashes into /etc/shadow. */
const USERS = [
  { name: 'gh-yescrypt', password: 'yes-Secret-1', method: 'YESCRYPT', prefix: '$y$' },
  { name: 'gh-sha512', password: 'sha-Secret-2', method: 'SHA512', prefix: '$6$' },
] as const;

describe('the agent as root: sign-in against real local accounts (pending unless root: it creates accounts)', function () {
  this.timeout(60_000);
  let server: GatehouseServer;
  let agent: AgentProcess;
  let dir: string;
  let port: number;
  let uid: string;

  before(async function () {
    if (process.getuid?.() !== 0) {
      // Creating accounts and switching user need root; CI runs as root.
      this.skip();
    }
    // Leftovers of an interrupted run would make useradd fail.
    for (const user of USERS) {
      try {
        execFileSync('userdel', ['-r', user.name], { stdio: 'ignore' });
      } catch {
        // not there: the usual case
      }
    }
    try {
      execFileSync('groupdel', ['gh-extra'], { stdio: 'ignore' });
    } catch {
      // not there
    }
    execFileSync('groupadd', ['gh-extra']);
    for (const user of USERS) {
      execFileSync('useradd', ['-m', '-s', '/bin/bash', '-G', 'gh-extra', user.name]);
      execFileSync('chpasswd', ['-c', user.method], { input: `${user.name}:${user.password}\n` });
    }
    // With the gateway: its public-key sign-ins reach this agent as SSH inside the tunnel (the session protocol is
    // off), where the agent checks the gateway key through the server.
    server = await GatehouseServer.start({ ssh: true });
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-root-test-'));
    agent = new AgentProcess({
      GATEHOUSE_SERVER_ADDRESS: server.url,
      GATEHOUSE_TENANT_ID: server.tenantId,
      GATEHOUSE_PRIVATE_KEY: join(dir, 'agent.key'),
      GATEHOUSE_PREFERRED_IDENTITY: 'root-test-device',
      GATEHOUSE_KEEPALIVE_INTERVAL: '1',
      GATEHOUSE_SESSION_PROTOCOL: 'off',
    });
    uid = await agent.uid();
    await server.setStatus(uid, 'accept');
    await server.waitOnline(uid);
    port = await server.sshPort(uid);
  });

  after(async () => {
    await agent?.stop();
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (process.getuid?.() === 0) {
      for (const user of USERS) {
        try {
          execFileSync('userdel', ['-r', user.name], { stdio: 'ignore' });
        } catch {
          // already gone
        }
      }
      try {
        execFileSync('groupdel', ['gh-extra'], { stdio: 'ignore' });
      } catch {
        // already gone
      }
    }
  });

  for (const user of USERS) {
    it(`signs ${user.name} in with its ${user.method} shadow hash and runs the session as that user`, async () => {
      const shadow = readFileSync('/etc/shadow', 'utf8');
      const hash = shadow
        .split('\n')
        .find((line) => line.startsWith(`${user.name}:`))!
        .split(':')[1]!;
      expect(hash.startsWith(user.prefix)).to.equal(true);

      const result = await runWithPassword(user.password, 'ssh', [
        ...baseSshOptions(port),
        ...passwordOptions(),
        `${user.name}@127.0.0.1`,
        'id -un; id -u; echo "$HOME|$SHELL|$USER"; touch ~/made-by-session; stat -c %U ~/made-by-session; id -Gn',
      ]);
      expect(result.code, result.stderr).to.equal(0);
      const [name, uid, env, owner, groups] = result.stdout.trim().split('\n');
      // Supplementary groups come along (sudo and docker rely on them).
      expect(groups!.split(' ')).to.include('gh-extra');
      expect(name).to.equal(user.name);
      expect(Number(uid)).to.be.above(0);
      expect(env).to.equal(`/home/${user.name}|/bin/bash|${user.name}`);
      expect(owner).to.equal(user.name);
    });

    it(`refuses ${user.name} with another account's password`, async () => {
      const other = USERS.find((u) => u !== user)!;
      const result = await runWithPassword(other.password, 'ssh', [
        ...baseSshOptions(port),
        ...passwordOptions(),
        `${user.name}@127.0.0.1`,
        'true',
      ]);
      expect(result.code).to.equal(255);
      expect(result.stderr).to.match(/Permission denied/);
    });
  }

  it('gives a local account a terminal of its own', async () => {
    const result = await runWithPassword(USERS[1].password, 'ssh', [
      ...baseSshOptions(port),
      ...passwordOptions(),
      '-tt',
      `${USERS[1].name}@127.0.0.1`,
      'echo "$(id -un) owns $(stat -c %U "$(tty)")"; id -Gn',
    ]);
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout).to.include(`${USERS[1].name} owns ${USERS[1].name}`);
    expect(result.stdout).to.include('gh-extra');
  });

  it('refuses an account that does not exist and one that is locked', async () => {
    const ghost = await runWithPassword('whatever', 'ssh', [
      ...baseSshOptions(port),
      ...passwordOptions(),
      'gh-nobody-here@127.0.0.1',
      'true',
    ]);
    expect(ghost.code).to.equal(255);
    execFileSync('usermod', ['-L', USERS[0].name]);
    try {
      const locked = await runWithPassword(USERS[0].password, 'ssh', [
        ...baseSshOptions(port),
        ...passwordOptions(),
        `${USERS[0].name}@127.0.0.1`,
        'true',
      ]);
      expect(locked.code).to.equal(255);
    } finally {
      execFileSync('usermod', ['-U', USERS[0].name]);
    }
  });

  it('signs the gateway in with its key only after the server signed the same blob', async () => {
    // A user's key the namespace allows: the gateway checks it, then signs in to the agent with the gateway's own
    // Ed25519 key, and the agent asks the server, through POST /api/auth/ssh, to sign the same blob, and compares.
    const userKey = join(dir, 'user_ed25519');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', userKey]);
    const registered = await server.api('POST', '/api/sshkeys/public-keys', {
      name: 'root-test-user',
      data: Buffer.from(readFileSync(`${userKey}.pub`, 'utf8')).toString('base64'),
      username: '.*',
      filter: { hostname: '.*' },
    });
    expect(registered.status, JSON.stringify(registered.body)).to.equal(200);
    const namespace = (await server.api('GET', `/api/namespaces/${server.tenantId}`)).body.name as string;
    const device = (await server.device(uid)).name as string;
    const viaKey = (keyPath: string, sshPort: number, args: string[]) =>
      run('ssh', [
        ...baseSshOptions(sshPort),
        '-o',
        'BatchMode=yes',
        '-o',
        'PreferredAuthentications=publickey',
        '-o',
        'IdentitiesOnly=yes',
        '-i',
        keyPath,
        ...args,
      ]);
    const signedIn = await viaKey(userKey, server.kernel.sshPort, [
      `${USERS[1].name}@${namespace}.${device}@127.0.0.1`,
      'id -un',
    ]);
    expect(signedIn.code, signedIn.stderr).to.equal(0);
    expect(signedIn.stdout.trim()).to.equal(USERS[1].name);

    // The gateway key in any other hands (here an OpenSSH client given the key file) signs nobody in: the server
    // signs only what the gateway itself signed to sign in to this device.
    const keyPath = join(dir, 'gateway_ed25519');
    writeFileSync(keyPath, server.kernel.container.cradle.keys.gatewayKey, { mode: 0o600 });
    const direct = await viaKey(keyPath, port, [`${USERS[1].name}@127.0.0.1`, 'true']);
    expect(direct.code).to.equal(255);
    expect(direct.stderr).to.match(/Permission denied/);

    // Another key: the server's signature no longer matches, so the agent says no.
    const otherPath = join(dir, 'other_ed25519');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', otherPath]);
    const refused = await run('ssh', [
      ...baseSshOptions(port),
      '-o',
      'BatchMode=yes',
      '-o',
      'IdentitiesOnly=yes',
      '-i',
      otherPath,
      `${USERS[1].name}@127.0.0.1`,
      'true',
    ]);
    expect(refused.code).to.equal(255);
    expect(refused.stderr).to.match(/Permission denied/);
  });

  it('forwards the client ssh-agent (-A) to the session', async () => {
    const agentSock = join(dir, 'ssh-agent.sock');
    const keyPath = join(dir, 'forwarded_ed25519');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'forwarded-key', '-f', keyPath]);
    const sshAgent = execFileSync('ssh-agent', ['-a', agentSock, '-s'], { encoding: 'utf8' });
    const agentPid = /SSH_AGENT_PID=(\d+)/.exec(sshAgent)?.[1];
    try {
      execFileSync('ssh-add', [keyPath], {
        env: { ...process.env, SSH_AUTH_SOCK: agentSock },
        stdio: 'ignore',
      });
      const result = await run(
        'sshpass',
        [
          '-e',
          'ssh',
          ...baseSshOptions(port),
          ...passwordOptions(),
          '-A',
          `${USERS[0].name}@127.0.0.1`,
          'ssh-add -l; stat -c %U "$SSH_AUTH_SOCK"',
        ],
        { env: { SSHPASS: USERS[0].password, SSH_AUTH_SOCK: agentSock } },
      );
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stdout).to.match(/forwarded-key \(ED25519\)/);
      expect(result.stdout.trim().split('\n').at(-1)).to.equal(USERS[0].name);
    } finally {
      if (agentPid) process.kill(Number(agentPid));
    }
  });
});
