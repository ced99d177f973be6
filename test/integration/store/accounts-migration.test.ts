import { loadConfig } from '@gatehouse/server';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { openDatabase } from '../../../core/store/db';
import { migrateLatest } from '../../../core/store/migrate';
import * as accounts from '../../../plugins/community/migrations/20261121001000_api_keys_and_mfa';
import { communityEditionMigrations } from '../../support/migrations';
import { dropDatabase, freshDatabase } from '../../support/server';

/** API keys and MFA recovery codes: up with rows and constraints, cascades, then down and up again. */
describe('store migrations: API keys and MFA recovery codes', () => {
  let db: Knex;
  let url: string | undefined;
  const tenant = '00000000-0000-4000-8000-00000000a001';
  const other = '00000000-0000-4000-8000-00000000a002';
  const owner = 'a'.repeat(24);
  const key = (name: string, t = tenant, digest = name.padEnd(64, '0')) => ({
    key_digest: digest,
    tenant_id: t,
    name,
    created_by: owner,
    role: 'observer',
    expires_in: -1,
  });

  before(async () => {
    url = await freshDatabase();
    db = openDatabase(loadConfig({}, { database: { url, poolMax: 2 } }), { memory: !url });
    await migrateLatest(db, communityEditionMigrations);
    await db('users').insert({
      id: owner,
      name: 'Ann',
      username: 'ann',
      email: 'ann@example.com',
      password_hash: 'x',
    });
    await db('namespaces').insert([
      { tenant_id: tenant, name: 'ann', owner },
      { tenant_id: other, name: 'ann-two', owner },
    ]);
  });
  after(async () => {
    await db?.destroy();
    await dropDatabase(url);
  });

  it('keeps key names unique per namespace, case-insensitively, and expiries past 2038', async () => {
    await db('api_keys').insert(key('deploy'));
    const clash = await db('api_keys')
      .insert(key('DEPLOY', tenant, 'b'.repeat(64)))
      .then(
        () => 'inserted',
        (e: { code?: string; constraint?: string }) => e.constraint ?? e.code,
      );
    expect(clash).to.equal('api_keys_tenant_name_key');
    await db('api_keys').insert(key('deploy', other, 'c'.repeat(64)));
    await db('api_keys').insert({ ...key('far-future', tenant, 'd'.repeat(64)), expires_in: 4_102_444_800 });
    const far = await db('api_keys').where({ name: 'far-future' }).first('expires_in');
    expect(Number(far.expires_in)).to.equal(4_102_444_800);
  });

  it('holds each recovery code of a user once', async () => {
    await db('mfa_recovery_codes').insert({ user_id: owner, code_digest: 'e'.repeat(64) });
    const twice = await db('mfa_recovery_codes')
      .insert({ user_id: owner, code_digest: 'e'.repeat(64) })
      .then(
        () => 'inserted',
        (e: { code?: string }) => e.code,
      );
    expect(twice).to.equal('23505');
    expect(await db('mfa_recovery_codes').where({ user_id: owner })).to.have.length(1);
  });

  it('deletes a namespace with its keys', async () => {
    await db('namespaces').where({ tenant_id: other }).delete();
    expect(await db('api_keys').where({ tenant_id: other })).to.have.length(0);
    expect(await db('api_keys').where({ tenant_id: tenant })).to.have.length(2);
  });

  it('goes down and up again', async () => {
    await accounts.down(db);
    expect(await db.schema.hasTable('api_keys')).to.equal(false);
    expect(await db.schema.hasTable('mfa_recovery_codes')).to.equal(false);
    await accounts.up(db);
    await db('api_keys').insert(key('again'));
    expect(await db('api_keys')).to.have.length(1);
  });
});
