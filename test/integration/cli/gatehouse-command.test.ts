import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { dropDatabase, freshDatabase } from '../../support/server';

const run = promisify(execFile);
const bin = path.resolve('bin/gatehouse.js');

/** The `gatehouse` command as an administrator runs it, against the same store the server would use. */
describe('the gatehouse command', function () {
  this.timeout(120_000);
  let env: NodeJS.ProcessEnv;
  let dataDir: string;
  let databaseUrl: string | undefined;

  const gatehouse = async (...args: string[]) => {
    try {
      const { stdout, stderr } = await run(process.execPath, [bin, ...args], { env, timeout: 60_000 });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };

  before(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'gh-cli-'));
    databaseUrl = await freshDatabase();
    env = {
      PATH: process.env.PATH,
      GATEHOUSE_DATA_DIR: dataDir,
      GATEHOUSE_PUBLIC_URL: 'https://gate.example.com',
      ...(databaseUrl ? { GATEHOUSE_DATABASE_URL: databaseUrl } : {}),
    };
  });
  after(async () => {
    await dropDatabase(databaseUrl);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('has --help on every command', async () => {
    const top = await gatehouse('--help');
    expect(top.code).to.equal(0);
    for (const cmd of [
      'serve',
      'setup-url',
      'migrate',
      'openapi',
      'reference',
      'user',
      'namespace',
      'member',
    ]) {
      expect(top.stdout).to.include(cmd);
    }
    for (const sub of [
      ['user', 'create'],
      ['user', 'password'],
      ['namespace', 'create'],
      ['namespace', 'set-max-devices'],
      ['member', 'add'],
    ]) {
      const res = await gatehouse(...sub, '--help');
      expect(res.code, sub.join(' ')).to.equal(0);
      expect(res.stdout).to.match(/Usage: gatehouse/);
    }
  });

  it('migrates and prints the setup link with a signature', async () => {
    expect((await gatehouse('migrate')).stdout).to.include('store is up to date');
    const res = await gatehouse('setup-url');
    expect(res.code).to.equal(0);
    expect(res.stdout.trim()).to.match(/^https:\/\/gate\.example\.com\/setup\?sign=[A-Za-z0-9_-]{86}$/);
    expect((await gatehouse('setup-url')).stdout).to.equal(res.stdout);
  });

  it('creates users, namespaces and members, and refuses bad input with a message and a non-zero exit', async () => {
    const created = await gatehouse(
      'user',
      'create',
      '--username',
      'bob',
      '--email',
      'bob@example.com',
      '--password',
      'hunter22',
    );
    expect(created.code, created.stderr).to.equal(0);
    expect(created.stdout).to.match(/created user bob \([0-9a-f]{24}\)/);
    await gatehouse(
      'user',
      'create',
      '--username',
      'carol',
      '--email',
      'carol@example.com',
      '--password',
      'hunter22',
    );

    const dup = await gatehouse(
      'user',
      'create',
      '--username',
      'BOB',
      '--email',
      'other@example.com',
      '--password',
      'hunter22',
    );
    expect(dup.code).to.not.equal(0);
    expect(dup.stderr).to.match(/conflict.*username/);
    const invalid = await gatehouse(
      'user',
      'create',
      '--username',
      'x',
      '--email',
      'nope',
      '--password',
      '1',
    );
    expect(invalid.code).to.not.equal(0);
    expect(invalid.stderr).to.match(/username/);
    expect(invalid.stderr).to.match(/email/);

    const ns = await gatehouse('namespace', 'create', '--name', 'acme', '--owner', 'bob');
    expect(ns.code, ns.stderr).to.equal(0);
    expect(ns.stdout).to.match(/created namespace acme \(tenant [0-9a-f-]{36}\)/);
    expect(
      (await gatehouse('namespace', 'create', '--name', 'Bad.Name', '--owner', 'bob')).code,
    ).to.not.equal(0);

    const member = await gatehouse(
      'member',
      'add',
      '--namespace',
      'acme',
      '--username',
      'carol',
      '--role',
      'operator',
    );
    expect(member.code, member.stderr).to.equal(0);
    expect(
      (await gatehouse('member', 'add', '--namespace', 'acme', '--username', 'carol', '--role', 'king')).code,
    ).to.not.equal(0);
    expect(
      (await gatehouse('member', 'add', '--namespace', 'nope', '--username', 'carol', '--role', 'observer'))
        .stderr,
    ).to.match(/namespace not found/);

    const limit = await gatehouse('namespace', 'set-max-devices', '--namespace', 'acme', '--max', '10');
    expect(limit.code, limit.stderr).to.equal(0);
    expect(
      (await gatehouse('namespace', 'set-max-devices', '--namespace', 'acme', '--max', '2')).code,
    ).to.not.equal(0);

    const pw = await gatehouse(
      'user',
      'password',
      '--username',
      'bob@example.com',
      '--password',
      'new-secret',
    );
    expect(pw.code, pw.stderr).to.equal(0);
    expect(
      (await gatehouse('user', 'password', '--username', 'ghost', '--password', 'new-secret')).code,
    ).to.not.equal(0);
  });

  it('prints the OpenAPI documents and the configuration reference', async () => {
    const doc = JSON.parse((await gatehouse('openapi', 'community')).stdout);
    expect(doc.openapi).to.equal('3.1.0');
    expect(doc.paths).to.have.property('/api/login');
    const ref = JSON.parse((await gatehouse('reference', '--json')).stdout);
    const port = ref.config.find((c: { key: string }) => c.key === 'http.port');
    expect(port).to.include({ env: 'GATEHOUSE_HTTP_PORT', default: 8080 });
    expect(ref.config.map((c: { env?: string }) => c.env)).to.include('GATEHOUSE_CONFIG');
    expect(ref.commands.map((c: { name: string }) => c.name)).to.include.members([
      'serve',
      'user create',
      'member add',
    ]);
  });

  it('stops with a message naming the key when the configuration is invalid', async () => {
    const res = await run(process.execPath, [bin, 'migrate'], {
      env: { ...env, GATEHOUSE_HTTP_PORT: 'x' },
    }).catch((e: { code: number; stderr: string }) => e);
    expect((res as { code: number }).code).to.equal(1);
    expect((res as { stderr: string }).stderr).to.include('http.port (GATEHOUSE_HTTP_PORT)');
  });

  it('says why when it cannot open the store, and exits non-zero', async () => {
    // A data directory that is a file: the embedded store cannot take its lock there.
    const notADir = path.join(dataDir, 'not-a-directory');
    writeFileSync(notADir, '');
    const res = await run(
      process.execPath,
      [bin, 'user', 'create', '--username', 'dan', '--email', 'dan@example.com', '--password', 'hunter22'],
      { env: { PATH: process.env.PATH, GATEHOUSE_DATA_DIR: notADir } },
    ).catch((e: { code: number; stderr: string }) => e);
    expect((res as { code: number }).code).to.equal(1);
    const stderr = (res as { stderr: string }).stderr;
    expect(stderr).to.include(notADir);
    // Not an error from stopping the half-opened server, which used to hide the cause.
    expect(stderr).not.to.match(/AwilixResolutionError|Could not resolve/);
  });
});
