import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { startServer, type TestServer } from '../../support/server';
import { createUser, PASSWORD } from './team';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

async function attempt(server: TestServer, username: string, password: string) {
  const res = await server.api('POST', '/api/login', { body: { username, password } });
  return { status: res.status, lockout: res.headers.get('x-account-lockout') };
}

describe('accounts: login lockout per source and user', function () {
  // Each user costs a password hash or two (scrypt, 32 MiB): slow on two busy cores and on PGlite.
  this.timeout(90_000);
  let server: TestServer;
  before(async () => {
    server = await startServer({
      ssh: false,
      overrides: { auth: { tokenTtl: 3600, lockoutThreshold: 3, lockoutMaxMinutes: 20 } },
    });
    await server.setup();
  });
  after(async () => {
    await server?.stop();
  });

  it('answers 401 with X-Account-Lockout 0 until the threshold, then 429 with the end time', async () => {
    await createUser(server, 'lock-me');
    expect(await attempt(server, 'lock-me', 'wrong-1')).to.deep.equal({ status: 401, lockout: '0' });
    expect(await attempt(server, 'lock-me', 'wrong-2')).to.deep.equal({ status: 401, lockout: '0' });
    const third = await attempt(server, 'lock-me', 'wrong-3');
    expect(third.status).to.equal(429);
    const now = Date.now() / 1000;
    expect(Number(third.lockout)).to.be.within(now + 55, now + 65);
    const right = await attempt(server, 'lock-me', PASSWORD);
    expect(right.status, 'the right password waits for the lock too').to.equal(429);
    expect(right.lockout).to.equal(third.lockout);
    const byEmail = await attempt(server, 'lock-me@example.com', PASSWORD);
    expect(byEmail.status, 'the pair is the user, however it is named').to.equal(429);
  });

  it('grows the lock with further failures, up to the configured cap', async () => {
    await createUser(server, 'lock-grow');
    for (let i = 0; i < 3; i++) await attempt(server, 'lock-grow', 'wrong');
    const user = await server.kernel.container.cradle.users.findByLogin('lock-grow');
    const until = `lockout:login:127.0.0.1:${user?.id}:until`;
    const minutes: number[] = [];
    for (let i = 0; i < 3; i++) {
      // The lock running out, without waiting for it: the failure count is kept.
      await server.kernel.container.cradle.cache.del(until);
      const res = await attempt(server, 'lock-grow', 'wrong');
      expect(res.status).to.equal(429);
      minutes.push(Math.round((Number(res.lockout) - Date.now() / 1000) / 60));
    }
    expect(minutes).to.deep.equal([4, 16, 20]);
  });

  it('resets on success and keeps other users and unknown names apart', async () => {
    await createUser(server, 'lock-reset');
    await attempt(server, 'lock-reset', 'wrong');
    await attempt(server, 'lock-reset', 'wrong');
    expect((await attempt(server, 'lock-reset', PASSWORD)).status).to.equal(200);
    expect((await attempt(server, 'lock-reset', 'wrong')).status).to.equal(401);
    expect((await attempt(server, 'lock-reset', 'wrong')).status, 'the count started again').to.equal(401);
    await createUser(server, 'lock-other');
    expect((await attempt(server, 'lock-other', PASSWORD)).status).to.equal(200);
    for (let i = 0; i < 2; i++) expect((await attempt(server, 'ghost-user', 'x')).status).to.equal(401);
    expect((await attempt(server, 'ghost-user', 'x')).status, 'unknown names lock the same way').to.equal(
      429,
    );
  });
});

describe('accounts: lockout counters shared through Redis', function () {
  // Each user costs a password hash or two (scrypt, 32 MiB): slow on two busy cores and on PGlite.
  this.timeout(90_000);
  let a: TestServer;
  let b: TestServer;
  before(async () => {
    const overrides = {
      // One key space for both servers, as for the instances of one deployment; fresh for each run.
      redis: { url: REDIS_URL, keyPrefix: `gatehouse-test-${randomBytes(6).toString('hex')}:` },
      auth: { tokenTtl: 3600, lockoutThreshold: 3, lockoutMaxMinutes: 60 },
    };
    a = await startServer({ ssh: false, overrides });
    b = await startServer({ ssh: false, overrides });
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
  });

  it('a lock earned on one server holds on another sharing Redis', async () => {
    // Distinct stores, so the name is unknown to both: the lock is keyed on the name typed.
    const name = `redis-${randomBytes(4).toString('hex')}`;
    expect((await attempt(a, name, 'x')).status).to.equal(401);
    expect((await attempt(b, name, 'x')).status).to.equal(401);
    const third = await attempt(a, name, 'x');
    expect(third.status).to.equal(429);
    const elsewhere = await attempt(b, name, 'x');
    expect(elsewhere.status).to.equal(429);
    expect(elsewhere.lockout).to.equal(third.lockout);
  });
});
