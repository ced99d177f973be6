import { loadConfig } from '@gatehouse/server';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { openDatabase } from '../../../core/store/db';
import {
  coreMigrations,
  type MigrationOwner,
  migrateDownAll,
  migrateLatest,
  migrationFiles,
  pluginMigrations,
  storeState,
} from '../../../core/store/migrate';
import community from '../../../plugins/community/index';
import { dropDatabase, freshDatabase } from '../../support/server';

/**
 * The store's state machine and the core and account migrations, up with rows and down, on the PostgreSQL of
 * TEST_DATABASE_URL (or PGlite in memory when unset).
 */
describe('store migrations: core and accounts', () => {
  const communityMigrations = pluginMigrations(community) as MigrationOwner;
  const owners = [coreMigrations, communityMigrations];
  let db: Knex;
  let url: string | undefined;
  before(async () => {
    url = await freshDatabase();
    const config = loadConfig({}, { database: { url, poolMax: 2 } });
    db = openDatabase(config, { memory: !url });
  });
  after(async () => {
    await db?.destroy();
    await dropDatabase(url);
  });

  it('reports first-run, then needs-migration, then ready', async () => {
    const first = await storeState(db, [coreMigrations]);
    expect(first.kind).to.equal('first-run');
    await migrateLatest(db, [coreMigrations]);
    const more = await storeState(db, owners);
    expect(more.kind).to.equal('needs-migration');
    expect((more as { pending: string[] }).pending).to.deep.equal(
      migrationFiles([communityMigrations]).map((m) => m.name),
    );
    await migrateLatest(db, owners);
    expect((await storeState(db, owners)).kind).to.equal('ready');
  });

  it('holds rows with the constraints the services rely on', async () => {
    await db('system_keys').insert({ name: 'k', value: 'v' });
    await db('users').insert({
      id: 'a'.repeat(24),
      name: 'Ann',
      username: 'Ann',
      email: 'ann@example.com',
      password_hash: 'x',
    });
    const dup = await db('users')
      .insert({ id: 'b'.repeat(24), name: 'B', username: 'ANN', email: 'b@example.com', password_hash: 'x' })
      .catch((e: { code?: string; constraint?: string }) => e);
    expect(dup).to.include({ code: '23505', constraint: 'users_username_key' });
    const tenant = '00000000-0000-4000-8000-000000000001';
    await db('namespaces').insert({ tenant_id: tenant, name: 'acme', owner: 'a'.repeat(24) });
    await db('namespace_members').insert({ tenant_id: tenant, user_id: 'a'.repeat(24), role: 'owner' });
    const ns = await db('namespaces').where({ tenant_id: tenant }).first();
    expect(ns.settings).to.deep.equal({ session_record: true, connection_announcement: '' });
    await db('namespaces').where({ tenant_id: tenant }).delete();
    expect(await db('namespace_members').where({ tenant_id: tenant })).to.deep.equal([]);
  });

  it('rolls every migration down, then up again', async () => {
    await migrateDownAll(db, owners);
    for (const t of ['users', 'namespaces', 'namespace_members', 'system_keys', 'system_state']) {
      expect(await db.schema.hasTable(t), t).to.equal(false);
    }
    await migrateLatest(db, owners);
    expect((await storeState(db, owners)).kind).to.equal('ready');
  });
});
