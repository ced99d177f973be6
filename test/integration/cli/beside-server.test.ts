import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { StoreLock } from '../../../core/store/lock';
import { gatehouse, ServerProcess } from '../../support/process';

/** The `npx gatehouse ...` lines of README's Administration section, as argument lists. */
function readmeCommands(): string[][] {
  const readme = readFileSync('README.md', 'utf8');
  const section = readme.slice(readme.indexOf('## Administration'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return block
    .split('\n')
    .filter((l) => l.startsWith('npx gatehouse '))
    .map((l) => l.replace(/\s*>.*$/, ''))
    .map((l) =>
      [...l.slice('npx gatehouse '.length).matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? ''),
    );
}

/**
 * README's administration commands, run as a user runs them: in a terminal beside `npm start`, on the default
 * embedded store. The running server sees each change at once, and it stays the only process on its store.
 */
describe("README's gatehouse commands beside a running server", function () {
  this.timeout(300_000);
  let dataDir: string;
  let server: ServerProcess;
  const env = () => ({ PATH: process.env.PATH, GATEHOUSE_DATA_DIR: dataDir });

  before(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'gh-beside-'));
    server = await ServerProcess.start(env());
  });
  after(async () => {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('runs every command through the server, which sees the results at once', async () => {
    const commands = readmeCommands();
    expect(commands.map((c) => c.slice(0, 2).join(' '))).to.include.members([
      'setup-url',
      'user create',
      'user password',
      'namespace create',
      'member add',
    ]);
    for (const args of commands) {
      const res = await gatehouse(env(), ...args);
      expect(res.code, `gatehouse ${args.join(' ')}: ${res.stderr}`).to.equal(0);
    }

    // The server, which never restarted, answers with what the commands did.
    const login = await server.api('POST', '/api/login', {
      body: { username: 'ada', password: 'another-one' },
    });
    expect(login.status, JSON.stringify(login.body)).to.equal(200);
    expect(login.body.admin).to.equal(true);
    const list = await server.api('GET', '/api/namespaces', { token: login.body.token });
    const acme = list.body.find((n: { name: string }) => n.name === 'acme');
    expect(acme, JSON.stringify(list.body)).to.include({ max_devices: 50 });
    expect(
      acme.members.map((m: { username: string; role: string }) => `${m.username}:${m.role}`),
    ).to.include.members(['ada:owner', 'bob:operator']);
    const bob = await server.api('POST', '/api/login', {
      body: { username: 'bob', password: 'bobs-secret' },
    });
    expect(bob.status, 'bob was disabled, then enabled again').to.equal(200);

    // Each change is in the server's log, by the local socket.
    expect(server.output).to.match(/"actor":"local-socket","action":"user.create","user":"ada"/);
    // No command opened the store: the server still holds it.
    expect(JSON.parse(readFileSync(StoreLock.file(dataDir), 'utf8'))).to.include({ pid: server.pid });
  });

  it('refuses bad input with the API answer and a non-zero exit, changing nothing', async () => {
    const dup = await gatehouse(
      env(),
      'user',
      'create',
      '--username',
      'ADA',
      '--email',
      'a@example.com',
      '--password',
      'hunter22',
    );
    expect(dup.code).to.equal(1);
    expect(dup.stderr).to.match(/conflict \(username\)/);
    const bad = await gatehouse(env(), 'namespace', 'create', '--name', 'Bad.Name', '--owner', 'ada');
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.match(/invalid \(name\)/);
    const missing = await gatehouse(
      env(),
      'member',
      'add',
      '--namespace',
      'nope',
      '--username',
      'ada',
      '--role',
      'observer',
    );
    expect(missing.stderr).to.match(/namespace not found/);
  });

  it('keeps what the commands wrote after the server restarts', async () => {
    await server.stop();
    server = await ServerProcess.start(env());
    const login = await server.api('POST', '/api/login', {
      body: { username: 'ada', password: 'another-one' },
    });
    expect(login.status).to.equal(200);
  });
});
