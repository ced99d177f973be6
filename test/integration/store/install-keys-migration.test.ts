import { expect } from 'chai';
import type { Knex } from 'knex';
import * as installKeys from '../../../plugins/community/migrations/20261215000000_install_keys';
import { type MigratedStore, migratedStore } from '../../support/store';

/** The install keys migration: up with rows and its constraints (keys, and what devices keep of them), then down. */
describe('store migrations: install keys', () => {
  let db: Knex;
  let store: MigratedStore;
  const tenant = '00000000-0000-4000-8000-00000000e001';
  const owner = 'e'.repeat(24);
  const keyId = '00000000-0000-4000-8000-0000000000a1';

  before(async () => {
    store = await migratedStore({ owner, username: 'eve', tenant, poolMax: 2 });
    db = store.db;
  });
  after(async () => {
    await store?.close();
  });

  const key = (id: string, name: string, extra: Record<string, unknown> = {}) => ({
    id,
    tenant_id: tenant,
    name,
    lookup: id.slice(-12),
    key_digest: 'd'.repeat(64),
    created_by: owner,
    ...extra,
  });
  const device = (c: string, extra: Record<string, unknown> = {}) => ({
    uid: c.repeat(64),
    tenant_id: tenant,
    name: `dev-${c}`,
    identity: JSON.stringify({ mac: `02:00:00:00:00:0${c}` }),
    info: JSON.stringify({
      id: 'debian',
      pretty_name: 'Debian',
      version: '1',
      arch: 'amd64',
      platform: 'native',
    }),
    public_key: 'key',
    ...extra,
  });

  it('keeps keys with their defaults, one name per namespace, and no negative counts', async () => {
    await db('install_keys').insert(key(keyId, 'Rollout'));
    const row = await db('install_keys').where({ id: keyId }).first();
    expect(row).to.include({ usage_limit: 0, used_times: 0, expires_at: null, last_used_at: null });
    const twin = await db('install_keys')
      .insert(key('00000000-0000-4000-8000-0000000000b2', 'rollout'))
      .catch((e) => e);
    expect(twin).to.include({ code: '23505', constraint: 'install_keys_tenant_name_key' });
    const negative = await db('install_keys')
      .insert(key('00000000-0000-4000-8000-0000000000b3', 'minus', { usage_limit: -1 }))
      .catch((e) => e);
    expect(negative).to.include({ code: '23514' });
  });

  it('lets devices name the key that admitted them, and forget it when the key is revoked', async () => {
    await db('devices').insert([device('a', { install_key_id: keyId }), device('b')]);
    const before = await db('devices').orderBy('uid').select('uid', 'install_key_id', 'registration_block');
    expect(before.map((r) => [r.install_key_id, r.registration_block])).to.deep.equal([
      [keyId, ''],
      [null, ''],
    ]);
    await db('install_keys').where({ id: keyId }).delete();
    expect(
      (
        await db('devices')
          .where({ uid: 'a'.repeat(64) })
          .first()
      ).install_key_id,
    ).to.equal(null);
    // A namespace goes with its keys.
    await db('install_keys').insert(key(keyId, 'again'));
    await db('namespaces').where({ tenant_id: tenant }).delete();
    expect(await db('install_keys')).to.deep.equal([]);
  });

  it('goes down and up again', async () => {
    await installKeys.down(db);
    expect(await db.schema.hasTable('install_keys')).to.equal(false);
    expect(await db.schema.hasColumn('devices', 'registration_source')).to.equal(false);
    await installKeys.up(db);
    expect(await db.schema.hasColumn('devices', 'install_key_id')).to.equal(true);
  });
});
