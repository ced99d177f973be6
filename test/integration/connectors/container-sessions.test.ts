import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { connectEngine, connectorState, engineAddress, type RunningConnector } from '../../support/connector';
import { keyOptions, passwordOptions } from '../../support/openssh';
import { CONTAINER_ACCOUNTS, type PodmanEngine, startPodman } from '../../support/podman';
import { type LoginAnswer, startServer, type TestServer } from '../../support/server';
import { Terminal } from '../../support/terminal';
import { baseSshOptions, run, runWithPassword } from '../agent/openssh-client';

/**
 * Accepted containers are reachable with the real OpenSSH client through the gateway (`user@namespace.container`)
 * without an agent inside: each session is an exec through podman's API, with stdin, stdout, stderr, exit status, a
 * TTY that follows window changes, and a recording like any session.
 */
describe('connectors: ssh to a container through the gateway (podman)', function () {
  this.timeout(120_000);
  let engine: PodmanEngine;
  let server: TestServer;
  let me: LoginAnswer;
  let dir: string;
  let keyFile: string;
  let containerUid: string;
  let connector: RunningConnector;
  const api = (method: string, p: string, body?: unknown) => server.api(method, p, { token: me.token, body });
  let namespace = '';
  const target = (user: string, container = 'shell-1') => `${user}@${namespace}.${container}@127.0.0.1`;
  /** The client's options, with the gateway's banner (a refusal's reason) printed: OpenSSH shows it at INFO. */
  const sshOptions = () =>
    baseSshOptions(server.sshPort).map((o) => (o === 'LogLevel=ERROR' ? 'LogLevel=INFO' : o));
  const ssh = (user: string, command: string[], opts: { input?: string; container?: string } = {}) =>
    runWithPassword(
      CONTAINER_ACCOUNTS[user as keyof typeof CONTAINER_ACCOUNTS] ?? 'wrong-password',
      'ssh',
      [...sshOptions(), ...passwordOptions(), '-T', target(user, opts.container), ...command],
      { input: opts.input, timeoutMs: 30_000 },
    );

  /** `ssh` with the namespace key of `file` only (no password, no prompts). */
  const sshKey = (file: string, user: string, command: string[], container?: string) =>
    run('ssh', [...sshOptions(), ...keyOptions(file), '-T', target(user, container), ...command]);

  const until = async <T>(what: string, read: () => Promise<T>, check: (v: T) => boolean, ms = 20_000) => {
    const deadline = Date.now() + ms;
    let last = await read();
    while (!check(last)) {
      if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(last)}`);
      await new Promise((r) => setTimeout(r, 100));
      last = await read();
    }
    return last;
  };

  before(async () => {
    engine = await startPodman();
    // Failed sign-ins from 127.0.0.1 are part of these tests: no penalties for it (core/ssh/penalties.ts).
    server = await startServer({
      edition: 'enterprise',
      overrides: { ssh: { penalties: { exempt: ['127.0.0.1'] } } },
    });
    me = await server.setup();
    namespace = (await api('GET', `/api/namespaces/${me.tenant}`)).body.name;
    expect(
      (await api('PUT', `/api/namespaces/${me.tenant}`, { settings: { session_record: true } })).status,
    ).to.equal(200);
    connector = await connectEngine(server, api, engineAddress(engine));
    await connectorState(api, connector.uid, 'connected');
    await engine.runContainer('shell-1');
    await engine.runContainer('waiting-1');
    const pending = await until(
      'containers pending',
      () =>
        api('GET', '/api/containers?status=pending').then((r) => r.body as { uid: string; name: string }[]),
      (l) => l.length === 2,
    );
    containerUid = pending.find((c) => c.name === 'shell-1')?.uid as string;
    expect((await api('PATCH', `/api/containers/${containerUid}/accept`)).status).to.equal(200);

    dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-container-ssh-'));
    keyFile = path.join(dir, 'id_ed25519');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', keyFile]);
    const line = readFileSync(`${keyFile}.pub`, 'utf8').trim();
    const key = await api('POST', '/api/sshkeys/public-keys', {
      data: Buffer.from(line).toString('base64'),
      filter: { hostname: '^shell-' },
      name: 'container-key',
      username: '^alice$',
    });
    expect(key.status, JSON.stringify(key.body)).to.equal(200);
  });
  after(async () => {
    await connector?.stop();
    await server?.stop();
    await engine?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('runs a command as the container account, with stdout, stderr and the exit status', async () => {
    const res = await ssh('alice', ['id -u; id -g; pwd; echo out; echo err >&2; exit 3']);
    expect(res.code, res.stderr).to.equal(3);
    expect(res.stdout).to.equal('1000\n1000\n/home/alice\nout\n');
    expect(res.stderr.replace(/^Warning: Permanently added .*\r\n/, '')).to.equal('err\n');
    const root = await ssh('root', ['id -u']);
    expect(root.code).to.equal(0);
    expect(root.stdout).to.equal('0\n');
  });

  it('passes stdin through to its end', async () => {
    const input = `${'line of input\n'.repeat(2000)}last`;
    const res = await ssh('alice', ['wc -c; echo done'], { input });
    expect(res.code, res.stderr).to.equal(0);
    expect(res.stdout).to.equal(`${Buffer.byteLength(input)}\ndone\n`);
  });

  it('refuses a wrong password, an unknown account and a pending container, saying why after a key sign-in', async () => {
    const wrong = await runWithPassword('not-the-password', 'ssh', [
      ...baseSshOptions(server.sshPort),
      ...passwordOptions(),
      '-T',
      target('alice'),
      'true',
    ]);
    expect(wrong.code).to.equal(255);
    expect(wrong.stderr).to.match(/Permission denied/);
    const nobody = await ssh('mallory', ['true']);
    expect(nobody.code).to.equal(255);
    // With the password alone the user has not signed in: a failed sign-in, whatever the reason.
    const pending = await ssh('alice', ['true'], { container: 'waiting-1' });
    expect(pending.code).to.equal(255);
    expect(pending.stderr, JSON.stringify(pending)).to.contain('gatehouse: not signed in');
    expect(pending.stderr).to.not.contain('waiting to be accepted');
    // Signed in with a key of the namespace for that container, the user is told why.
    const waitingKey = path.join(dir, 'id_waiting');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', waitingKey]);
    const registered = await api('POST', '/api/sshkeys/public-keys', {
      data: Buffer.from(readFileSync(`${waitingKey}.pub`, 'utf8').trim()).toString('base64'),
      filter: { hostname: '^waiting-' },
      name: 'waiting-key',
      username: '.*',
    });
    expect(registered.status, JSON.stringify(registered.body)).to.equal(200);
    const told = await sshKey(waitingKey, 'alice', ['true'], 'waiting-1');
    expect(told.code).to.equal(255);
    expect(told.stderr, JSON.stringify(told)).to.contain(
      `device ${namespace}.waiting-1 is waiting to be accepted`,
    );
  });

  it('signs in with a namespace public key for that user and container, and not for another user', async () => {
    const res = await sshKey(keyFile, 'alice', ['echo $USER $HOME']);
    expect(res.code, res.stderr).to.equal(0);
    expect(res.stdout).to.equal('alice /home/alice\n');
    const root = await sshKey(keyFile, 'root', ['true']);
    expect(root.code).to.equal(255);
  });

  it('gives a TTY that follows window changes, and records the session', async () => {
    const term = new Terminal(
      [
        ...baseSshOptions(server.sshPort),
        '-i',
        keyFile,
        '-o',
        'IdentitiesOnly=yes',
        '-o',
        'BatchMode=yes',
        '-tt',
        target('alice'),
      ],
      { cols: 100, rows: 30 },
    );
    // busybox's ash asks the terminal where the cursor is after each prompt (Terminal answers as a terminal
    // would) and redraws it on a window change; keys typed during either exchange are read as part of it.
    await term.waitFor(/~ \$ /);
    await term.settle();
    term.type('stty size\r');
    await term.waitFor(/\r\n30 100\r\n/);
    term.resize(120, 40);
    await term.settle();
    term.type('stty size; tty\r');
    await term.waitFor(/\r\n40 120\r\n\/dev\/pts\/\d+\r\n/);
    await term.settle();
    term.type('exit 4\r');
    expect(await term.exited).to.equal(4);

    const session = await until(
      'the recorded session',
      () =>
        api('GET', '/api/sessions?per_page=100').then((r) =>
          (r.body as { device_uid: string; recorded: boolean; active: boolean; uid: string }[]).find(
            (s) => s.device_uid === containerUid && s.recorded && !s.active,
          ),
        ),
      (s) => s !== undefined,
    );
    const full = (await api('GET', `/api/sessions/${session?.uid}`)).body;
    expect(full).to.include({ username: 'alice', type: 'term', authenticated: true });
    expect(full.events.types).to.include.members(['pty-req', 'shell', 'window-change', 'exit-status']);
    const exit = full.events.items.find((e: { type: string }) => e.type === 'exit-status');
    expect(exit.data).to.deep.equal({ code: 4 });
    const records = await api('GET', `/api/sessions/${session?.uid}/records/0`);
    const played = records.body.map((r: { message: string }) => r.message).join('');
    expect(played).to.contain('30 100');
    expect(played).to.contain('40 120');
    expect(
      records.body.some((r: { width: number; height: number }) => r.width === 120 && r.height === 40),
    ).to.equal(true);
  });

  it('refuses once the container stops, and SFTP (no agent inside)', async () => {
    const sftp = await runWithPassword(CONTAINER_ACCOUNTS.alice, 'sftp', [
      ...baseSshOptions(server.sshPort).map((o) => (o === '-p' ? '-P' : o)),
      ...passwordOptions(),
      target('alice'),
    ]);
    expect(sftp.code).to.not.equal(0);
    await engine.podman('stop', '-t', '0', 'shell-1');
    await until(
      'shell-1 offline',
      () => api('GET', `/api/containers/${containerUid}`).then((r) => r.body.online as boolean),
      (online) => !online,
    );
    const res = await sshKey(keyFile, 'alice', ['true']);
    expect(res.code).to.equal(255);
    expect(res.stderr).to.contain(`device ${namespace}.shell-1 is offline`);
    expect((await ssh('alice', ['true'])).stderr).to.contain('gatehouse: not signed in');
  });
});
