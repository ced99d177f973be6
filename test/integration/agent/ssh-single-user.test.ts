import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { type AddressInfo, createConnection } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { spawn as spawnPty } from '@lydell/node-pty';
import { expect } from 'chai';
import ssh2 from 'ssh2';
import { AgentProcess } from '../../support/agent-process';
import { passwordOptions } from '../../support/openssh';
import { GatehouseServer } from './gatehouse-server';
import { baseSshOptions, run, runWithPassword } from './openssh-client';

const PASSWORD = 'single user secret';
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** Polls until something listens on 127.0.0.1:port (ssh -L binds after sign-in). */
async function waitForListener(port: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: '127.0.0.1', port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`nothing listens on ${port}`);
}

async function freePort(): Promise<number> {
  const probe = createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe('OpenSSH clients through the tunnel to the agent (single-user mode)', function () {
  this.timeout(60_000);
  let server: GatehouseServer;
  let agent: AgentProcess;
  let dir: string;
  let port: number;
  const me = userInfo().username;
  const ssh = (args: string[], input?: string) =>
    runWithPassword(PASSWORD, 'ssh', [...baseSshOptions(port), ...passwordOptions(), ...args], { input });

  before(async () => {
    server = await GatehouseServer.start();
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-ssh-test-'));
    agent = new AgentProcess({
      GATEHOUSE_SERVER_ADDRESS: server.url,
      GATEHOUSE_TENANT_ID: server.tenantId,
      GATEHOUSE_PRIVATE_KEY: join(dir, 'agent.key'),
      GATEHOUSE_PREFERRED_IDENTITY: 'ssh-test-device',
      GATEHOUSE_KEEPALIVE_INTERVAL: '1',
      GATEHOUSE_SINGLE_USER_PASSWORD: PASSWORD,
    });
    const uid = await agent.uid();
    await server.setStatus(uid, 'accept');
    await server.waitOnline(uid);
    port = await server.sshPort(uid);
  });

  after(async () => {
    await agent?.stop();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs a command as the agent user and returns its exit status', async () => {
    const result = await ssh([`${me}@127.0.0.1`, 'id -un; exit 7']);
    expect(result.stdout.trim()).to.equal(me);
    expect(result.code).to.equal(7);
  });

  it('keeps stderr apart from stdout', async () => {
    const result = await ssh([`anyone@127.0.0.1`, 'echo to-out; echo to-err >&2']);
    expect(result.code).to.equal(0);
    expect(result.stdout).to.equal('to-out\n');
    expect(result.stderr).to.equal('to-err\n');
  });

  it('delivers megabytes of interleaved stdout and stderr complete', async () => {
    const result = await ssh([
      `${me}@127.0.0.1`,
      'for i in $(seq 40); do head -c 100000 /dev/zero | tr "\\0" o; head -c 100000 /dev/zero | tr "\\0" e >&2; done',
    ]);
    expect(result.code).to.equal(0);
    expect(result.stdout.length).to.equal(4_000_000);
    expect(result.stderr.length).to.equal(4_000_000);
    expect(/^o+$/.test(result.stdout)).to.equal(true);
    expect(/^e+$/.test(result.stderr)).to.equal(true);
  });

  it('delivers interleaved stdout and stderr in full to an ssh2 client that pauses reading', async () => {
    const client = new ssh2.Client();
    await new Promise<void>((resolve, reject) => {
      client.once('ready', () => resolve()).once('error', reject);
      client.connect({ host: '127.0.0.1', port, username: me, password: PASSWORD });
    });
    try {
      const sizes = await new Promise<{ out: number; err: number; code: number }>((resolve, reject) => {
        client.exec(
          'for i in $(seq 20); do head -c 200000 /dev/zero; head -c 200000 /dev/zero >&2; done',
          (error, channel) => {
            if (error) return reject(error);
            let out = 0;
            let err = 0;
            let code = -1;
            // Hold both streams so the window fills, then read.
            channel.pause();
            channel.stderr.pause();
            setTimeout(() => {
              channel.resume();
              channel.stderr.resume();
            }, 500);
            channel.on('data', (chunk: Buffer) => {
              out += chunk.length;
            });
            channel.stderr.on('data', (chunk: Buffer) => {
              err += chunk.length;
            });
            channel.on('exit', (status: number) => {
              code = status;
            });
            channel.on('close', () => resolve({ out, err, code }));
          },
        );
      });
      expect(sizes).to.deep.equal({ out: 4_000_000, err: 4_000_000, code: 0 });
    } finally {
      client.end();
    }
  });

  it('forwards signals to the running command', async () => {
    const client = new ssh2.Client();
    await new Promise<void>((resolve, reject) => {
      client.once('ready', () => resolve()).once('error', reject);
      client.connect({ host: '127.0.0.1', port, username: me, password: PASSWORD });
    });
    try {
      const signal = await new Promise<string | undefined>((resolve, reject) => {
        client.exec('echo started; exec sleep 30', (error, channel) => {
          if (error) return reject(error);
          channel.once('data', () => channel.signal('TERM'));
          channel.on('exit', (_code: number | null, name?: string) => resolve(name));
          channel.resume();
        });
      });
      // "TERM" on the wire (RFC 4254 6.10); ssh2's client reports it with the SIG prefix.
      expect(signal).to.equal('SIGTERM');
    } finally {
      client.end();
    }
  });

  it('runs a shell without a PTY that reads its commands from stdin', async () => {
    const result = await ssh(['-T', `${me}@127.0.0.1`], 'echo "no tty: $(tty)"; echo oops >&2; exit 5\n');
    expect(result.stdout).to.equal('no tty: not a tty\n');
    expect(result.stderr).to.equal('oops\n');
    expect(result.code).to.equal(5);
  });

  it('passes stdin to the command and ends it', async () => {
    const result = await ssh([`${me}@127.0.0.1`, 'wc -c'], 'x'.repeat(100_000));
    expect(result.stdout.trim()).to.equal('100000');
  });

  it('refuses a wrong password', async () => {
    const result = await runWithPassword('wrong', 'ssh', [
      ...baseSshOptions(port),
      ...passwordOptions(),
      `${me}@127.0.0.1`,
      'true',
    ]);
    expect(result.code).to.equal(255);
    expect(result.stderr).to.match(/Permission denied/);
  });

  it('passes LANG and LC_* but not other client variables', async () => {
    const result = await ssh([
      '-o',
      'SetEnv=LC_GATEHOUSE=hello LD_PRELOAD=/nope',
      `${me}@127.0.0.1`,
      'echo "$LC_GATEHOUSE|$LD_PRELOAD|$HOME|$USER"',
    ]);
    expect(result.stdout.trim()).to.equal(`hello||${userInfo().homedir}|${me}`);
  });

  it('gives a PTY that follows window changes', async () => {
    const term = spawnPty(
      'sshpass',
      ['-e', 'ssh', ...baseSshOptions(port), ...passwordOptions(), '-tt', `${me}@127.0.0.1`],
      {
        cols: 100,
        rows: 30,
        env: { ...process.env, SSHPASS: PASSWORD, TERM: 'xterm' } as Record<string, string>,
      },
    );
    let output = '';
    term.onData((data) => {
      output += data;
    });
    const waitFor = async (pattern: RegExp) => {
      for (let i = 0; i < 200 && !pattern.test(output); i++) await new Promise((r) => setTimeout(r, 50));
      expect(output).to.match(pattern);
    };
    try {
      term.write('tty; stty size; echo "TERM=$TERM"\r');
      await waitFor(/\/dev\/pts\/\d+[\s\S]*30 100[\s\S]*TERM=xterm/);
      term.resize(120, 40);
      await new Promise((r) => setTimeout(r, 300));
      term.write('stty size\r');
      await waitFor(/40 120/);
      term.write('exit 3\r');
      const exit = await new Promise<number>((resolve) => term.onExit(({ exitCode }) => resolve(exitCode)));
      expect(exit).to.equal(3);
    } finally {
      term.kill();
    }
  });

  it('delivers all output of a PTY command before its exit status', async () => {
    // An ssh2 client, as the gateway is: sshpass runs OpenSSH in a pty of its own and may
    // drop the tail of a -tt session's output when ssh exits, which would hide our part.
    const client = new ssh2.Client();
    await new Promise<void>((resolve, reject) => {
      client.once('ready', () => resolve()).once('error', reject);
      client.connect({ host: '127.0.0.1', port, username: me, password: PASSWORD });
    });
    try {
      for (let i = 0; i < 3; i++) {
        const { text, code } = await new Promise<{ text: string; code: number }>((resolve, reject) => {
          client.exec(
            'seq 1 30000; exit 4',
            { pty: { rows: 24, cols: 80, term: 'xterm' } },
            (error, channel) => {
              if (error) return reject(error);
              const chunks: Buffer[] = [];
              let status = -1;
              channel.on('data', (chunk: Buffer) => chunks.push(chunk));
              channel.on('exit', (exit: number) => {
                status = exit;
              });
              channel.on('close', () => resolve({ text: Buffer.concat(chunks).toString(), code: status }));
            },
          );
        });
        expect(code).to.equal(4);
        const lines = text.trim().split(/\r?\n/);
        expect(lines.length).to.equal(30000);
        expect(lines.at(-1)).to.equal('30000');
      }
    } finally {
      client.end();
    }
  });

  it('copies a multi-megabyte file both ways with sftp and scp intact', async () => {
    const data = randomBytes(6 * 1024 * 1024 + 123);
    const local = join(dir, 'upload.bin');
    writeFileSync(local, data);
    const remote = join(dir, 'remote.bin');
    const back = join(dir, 'back.bin');
    // Commands on stdin rather than -b: batch mode would turn password sign-in off.
    const sftp = await runWithPassword(
      PASSWORD,
      'sftp',
      [...baseSshOptions(port).map((a) => (a === '-p' ? '-P' : a)), ...passwordOptions(), `${me}@127.0.0.1`],
      { input: `put ${local} ${remote}\nget ${remote} ${back}\n`, timeoutMs: 40_000 },
    );
    expect(sftp.code, sftp.stderr).to.equal(0);
    expect(sha256(readFileSync(remote))).to.equal(sha256(data));
    expect(sha256(readFileSync(back))).to.equal(sha256(data));

    const scpRemote = join(dir, 'scp-remote.bin');
    const scpBack = join(dir, 'scp-back.bin');
    const scpOptions = [...baseSshOptions(port).map((a) => (a === '-p' ? '-P' : a)), ...passwordOptions()];
    // -O: the classic scp protocol, which runs `scp -t` / `scp -f` as a command on the device.
    const up = await runWithPassword(
      PASSWORD,
      'scp',
      ['-O', ...scpOptions, local, `${me}@127.0.0.1:${scpRemote}`],
      {
        timeoutMs: 40_000,
      },
    );
    expect(up.code, up.stderr).to.equal(0);
    const down = await runWithPassword(
      PASSWORD,
      'scp',
      ['-O', ...scpOptions, `${me}@127.0.0.1:${scpRemote}`, scpBack],
      { timeoutMs: 40_000 },
    );
    expect(down.code, down.stderr).to.equal(0);
    expect(sha256(readFileSync(scpRemote))).to.equal(sha256(data));
    expect(sha256(readFileSync(scpBack))).to.equal(sha256(data));
  });

  it('forwards a local port (-L) to a web server on the device network', async () => {
    const web = createServer((_req, res) => res.end('hello through -L'));
    web.listen(0, '127.0.0.1');
    await once(web, 'listening');
    const localPort = await freePort();
    const forward = runWithPassword(PASSWORD, 'ssh', [
      ...baseSshOptions(port),
      ...passwordOptions(),
      '-L',
      `${localPort}:127.0.0.1:${(web.address() as AddressInfo).port}`,
      `${me}@127.0.0.1`,
      'sleep 4',
    ]);
    try {
      await waitForListener(localPort);
      const response = await fetch(`http://127.0.0.1:${localPort}/`);
      expect(await response.text()).to.equal('hello through -L');
    } finally {
      web.close();
    }
    expect((await forward).code).to.equal(0);
  });

  it('forwards a port on the device back to the client (-R)', async () => {
    const web = createServer((_req, res) => res.end('hello through -R'));
    web.listen(0, '127.0.0.1');
    await once(web, 'listening');
    const devicePort = await freePort();
    const forward = runWithPassword(PASSWORD, 'ssh', [
      ...baseSshOptions(port),
      ...passwordOptions(),
      '-o',
      'ExitOnForwardFailure=yes',
      '-R',
      `${devicePort}:127.0.0.1:${(web.address() as AddressInfo).port}`,
      `${me}@127.0.0.1`,
      'sleep 4',
    ]);
    try {
      // The agent listens on the device (this machine) and hands connections to the client.
      await waitForListener(devicePort);
      const response = await fetch(`http://127.0.0.1:${devicePort}/`);
      expect(await response.text()).to.equal('hello through -R');
    } finally {
      web.close();
    }
    const result = await forward;
    expect(result.code, result.stderr).to.equal(0);
  });

  it('serves several channels on one connection (ControlMaster)', async () => {
    const control = join(dir, 'control.sock');
    const target = `${me}@127.0.0.1`;
    const master = runWithPassword(
      PASSWORD,
      'ssh',
      [...baseSshOptions(port), ...passwordOptions(), '-M', '-S', control, '-N', target],
      { timeoutMs: 30_000 },
    );
    try {
      let check = await run('ssh', ['-S', control, '-O', 'check', target]);
      for (let i = 0; i < 100 && check.code !== 0; i++) {
        await new Promise((r) => setTimeout(r, 100));
        check = await run('ssh', ['-S', control, '-O', 'check', target]);
      }
      expect(check.code, check.stderr).to.equal(0);
      // These have no password: they can only work as channels of the master's connection.
      const results = await Promise.all(
        [1, 2, 3, 4].map((n) =>
          run('ssh', [
            ...baseSshOptions(port),
            '-o',
            'BatchMode=yes',
            '-S',
            control,
            target,
            `sleep 0.5; echo channel-${n}`,
          ]),
        ),
      );
      expect(results.map((r) => r.stdout.trim())).to.deep.equal([
        'channel-1',
        'channel-2',
        'channel-3',
        'channel-4',
      ]);
    } finally {
      await run('ssh', ['-S', control, '-O', 'exit', target]);
    }
    // The master ends when told to exit (OpenSSH reports 255 for that); just reap it.
    await master;
  });

  it('stays up across client keepalives', async () => {
    const result = await ssh([
      '-o',
      'ServerAliveInterval=1',
      '-o',
      'ServerAliveCountMax=2',
      `${me}@127.0.0.1`,
      'sleep 3; echo alive',
    ]);
    expect(result.stdout.trim()).to.equal('alive');
    expect(result.code).to.equal(0);
  });
});
