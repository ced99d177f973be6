import fs, { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '@gatehouse/server';
import { expect } from 'chai';
import { openDatabase } from '../../../core/store/db';
import { StoreBusy, StoreLock } from '../../../core/store/lock';
import { gatehouse, ServerProcess } from '../../support/process';
import { defaultUser } from '../../support/server';

/**
 * The embedded store (PGlite in the data directory, the default of `npm start`) as users run it: a committed
 * write survives the server being killed, and no second process opens the store a server holds.
 */
describe('the embedded store', function () {
  this.timeout(180_000);
  let dataDir: string;
  const env = () => ({ PATH: process.env.PATH, GATEHOUSE_DATA_DIR: dataDir });

  beforeEach(() => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'gh-embedded-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('keeps every write the API acknowledged when the server is killed with SIGKILL', async () => {
    const first = await ServerProcess.start(env());
    try {
      const sign = new URL(first.setupLink).searchParams.get('sign');
      expect((await first.api('POST', `/api/setup?sign=${sign}`, { body: defaultUser })).status).to.equal(
        200,
      );
      const login = await first.api('POST', '/api/login', {
        body: { username: defaultUser.username, password: defaultUser.password },
      });
      const created = await first.api('POST', '/api/namespaces', {
        token: login.body.token,
        body: { name: 'written-before-kill' },
      });
      expect(created.status, JSON.stringify(created.body)).to.equal(200);
    } finally {
      // No shutdown, no checkpoint: what a crash or an OOM kill does.
      await first.stop('SIGKILL');
    }

    const second = await ServerProcess.start(env());
    try {
      expect(second.setupLink, 'a restarted server asks for setup again').to.equal('');
      const login = await second.api('POST', '/api/login', {
        body: { username: defaultUser.username, password: defaultUser.password },
      });
      expect(login.status).to.equal(200);
      const list = await second.api('GET', '/api/namespaces', { token: login.body.token });
      expect(list.body.map((n: { name: string }) => n.name)).to.include('written-before-kill');
    } finally {
      await second.stop();
    }
  });

  it('syncs each commit to disk: PostgreSQL fsync calls reach the file system', async () => {
    // PGlite starts PostgreSQL with fsync off and drops its fsync calls (electric-sql/pglite#1107): a power cut or
    // an OS crash then loses commits the API acknowledged. Count the real fsync(2) calls a commit makes.
    const db = openDatabase(loadConfig({}, { dataDir }));
    const real = fs.fsyncSync;
    let calls = 0;
    try {
      await db.raw('create table t (x int)');
      (fs as { fsyncSync: typeof fs.fsyncSync }).fsyncSync = (fd) => {
        calls++;
        real(fd);
      };
      await db('t').insert({ x: 1 });
      expect(calls, 'fsync calls made by one committed insert').to.be.greaterThan(0);
      const settings = await db.raw("select name, setting from pg_settings where name in ('fsync')");
      expect(settings.rows).to.deep.equal([{ name: 'fsync', setting: 'on' }]);
    } finally {
      (fs as { fsyncSync: typeof fs.fsyncSync }).fsyncSync = real;
      await db.destroy();
    }
  });

  it('refuses a second process while a server holds the store, and takes over the lock of a killed one', async () => {
    const server = await ServerProcess.start(env());
    const lock = JSON.parse(readFileSync(StoreLock.file(dataDir), 'utf8'));
    expect(lock).to.include({ pid: server.pid, command: 'serve' });

    const second = await ServerProcess.start({ ...env(), GATEHOUSE_HTTP_PORT: '0' }).then(
      async (s) => {
        await s.stop('SIGKILL');
        return 'started';
      },
      (err: Error) => err.message,
    );
    expect(second).to.match(new RegExp(`in use by process ${server.pid} \\(gatehouse serve`));

    await server.stop('SIGKILL');
    const after = await gatehouse(env(), 'migrate');
    expect(after.code, after.stderr).to.equal(0);
    expect(after.stdout).to.include('store is up to date');
  });

  it('takes over a lock whose pid now belongs to another process (a pid reused after a crash)', () => {
    // The lock names this very process but with another start time: what a container restart leaves behind.
    writeFileSync(
      StoreLock.file(dataDir),
      JSON.stringify({ pid: process.pid, started: '1', command: 'serve', at: 'then' }),
    );
    const lock = StoreLock.acquire(dataDir, 'test');
    try {
      expect(() => StoreLock.acquire(dataDir, 'again')).to.throw(StoreBusy, /in use by process/);
    } finally {
      lock.release();
    }
    StoreLock.acquire(dataDir, 'after release').release();
  });
});
