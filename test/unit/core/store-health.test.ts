import { loadConfig } from '@gatehouse/server';
import { expect } from 'chai';
import pino from 'pino';
import { openDatabase } from '../../../core/store/db';
import { isStoreUnavailable, StoreHealth } from '../../../core/store/health';

function netError(code: string): Error {
  return Object.assign(new Error(`connect ${code} 127.0.0.1:25`), { code, syscall: 'connect' });
}

describe('core: which errors mean the store is away', function () {
  this.timeout(30_000);
  const db = openDatabase(loadConfig({}, {}), { memory: true });
  const health = new StoreHealth(db, pino({ level: 'silent' }));
  before(async () => {
    // The embedded store starts on the first query; a check is bounded to 2 s.
    await db.raw('select 1');
  });
  after(async () => {
    health.stop();
    await db.destroy();
  });

  it('takes errors only the database drivers raise as the store being away', async () => {
    const terminated = Object.assign(new Error('terminating connection due to administrator command'), {
      code: '57P01',
    });
    expect(await isStoreUnavailable(terminated, undefined)).to.equal(true);
    expect(await isStoreUnavailable(new Error('Query read timeout'), undefined)).to.equal(true);
    // pg's connect timeout: the server took the connection and never answered it (a frozen PostgreSQL).
    expect(await isStoreUnavailable(new Error('timeout expired'), undefined)).to.equal(true);
    expect(
      await isStoreUnavailable(Object.assign(new Error('x'), { name: 'KnexTimeoutError' }), undefined),
    ).to.equal(true);
  });

  it('does not take a refused connection elsewhere (a mail server) for the store while the store answers', async () => {
    expect(await isStoreUnavailable(netError('ECONNREFUSED'), health)).to.equal(false);
    expect(health.isDown).to.equal(false);
  });

  it('does not take a query the store refused for the store being away', async () => {
    const refused = Object.assign(new Error('invalid input syntax'), { code: '22P02' });
    expect(await isStoreUnavailable(refused, health)).to.equal(false);
  });
});
