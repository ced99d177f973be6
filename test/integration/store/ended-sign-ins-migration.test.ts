import { loadConfig } from '@gatehouse/server';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { openDatabase } from '../../../core/store/db';
import { migrateLatest } from '../../../core/store/migrate';
import * as endedSignIns from '../../../plugins/community/migrations/20261220000000_ended_sign_ins';
import { communityEditionMigrations } from '../../support/migrations';
import { dropDatabase, freshDatabase } from '../../support/server';

/** Ended sign-ins (sign-out): one row per sign-in, gone with its user, then down and up again. */
describe('store migrations: ended sign-ins', () => {
  let db: Knex;
  let url: string | undefined;
  const user = 'b'.repeat(24);
  const soon = () => new Date(Date.now() + 3600_000);

  before(async () => {
    url = await freshDatabase();
    db = openDatabase(loadConfig({}, { database: { url, poolMax: 2 } }), { memory: !url });
    await migrateLatest(db, communityEditionMigrations);
    await db('users').insert({
      id: user,
      name: 'Bo',
      username: 'bo',
      email: 'bo@example.com',
      password_hash: 'x',
    });
  });
  after(async () => {
    await db?.destroy();
    await dropDatabase(url);
  });

  it('keeps a sign-in once, and only for a user that exists', async () => {
    await db('ended_sign_ins').insert({ sign_in: 'a'.repeat(22), user_id: user, expires_at: soon() });
    const twice = await db('ended_sign_ins')
      .insert({ sign_in: 'a'.repeat(22), user_id: user, expires_at: soon() })
      .then(
        () => 'inserted',
        (e: { code?: string }) => e.code,
      );
    expect(twice).to.equal('23505');
    const stranger = await db('ended_sign_ins')
      .insert({ sign_in: 'c'.repeat(22), user_id: 'f'.repeat(24), expires_at: soon() })
      .then(
        () => 'inserted',
        (e: { code?: string }) => e.code,
      );
    expect(stranger).to.equal('23503');
  });

  it('goes with its user', async () => {
    await db('users').where({ id: user }).delete();
    expect(await db('ended_sign_ins')).to.have.length(0);
  });

  it('goes down and up again', async () => {
    await endedSignIns.down(db);
    expect(await db.schema.hasTable('ended_sign_ins')).to.equal(false);
    await endedSignIns.up(db);
    expect(await db.schema.hasTable('ended_sign_ins')).to.equal(true);
  });
});
