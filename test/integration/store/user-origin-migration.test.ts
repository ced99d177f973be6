import { loadConfig } from '@gatehouse/server';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { openDatabase } from '../../../core/store/db';
import { migrateLatest } from '../../../core/store/migrate';
import * as userOrigin from '../../../plugins/community/migrations/20261221000000_user_origin';
import { communityEditionMigrations } from '../../support/migrations';
import { dropDatabase, freshDatabase } from '../../support/server';

/** Where an account comes from: local unless said otherwise, only local or saml, then down and up again. */
describe('store migrations: user origin', () => {
  let db: Knex;
  let url: string | undefined;
  const bo = { id: 'b'.repeat(24), name: 'Bo', username: 'bo', email: 'bo@example.com', password_hash: 'x' };

  before(async () => {
    url = await freshDatabase();
    db = openDatabase(loadConfig({}, { database: { url, poolMax: 2 } }), { memory: !url });
    await migrateLatest(db, communityEditionMigrations);
  });
  after(async () => {
    await db?.destroy();
    await dropDatabase(url);
  });

  it('makes an account local unless it says saml, and refuses any other origin', async () => {
    await db('users').insert(bo);
    await db('users').insert({
      ...bo,
      id: 'c'.repeat(24),
      username: 'cy',
      email: 'cy@example.com',
      origin: 'saml',
    });
    const rows = await db('users').select('username', 'origin').orderBy('username');
    expect(rows).to.deep.equal([
      { username: 'bo', origin: 'local' },
      { username: 'cy', origin: 'saml' },
    ]);
    const odd = await db('users')
      .insert({ ...bo, id: 'd'.repeat(24), username: 'di', email: 'di@example.com', origin: 'oidc' })
      .then(
        () => 'inserted',
        (e: { code?: string }) => e.code,
      );
    expect(odd).to.equal('23514');
  });

  it('goes down and up again, existing accounts becoming local', async () => {
    await userOrigin.down(db);
    expect(await db.schema.hasColumn('users', 'origin')).to.equal(false);
    await userOrigin.up(db);
    const rows = await db('users').select('origin');
    expect(rows.map((r) => r.origin)).to.deep.equal(['local', 'local']);
  });
});
