import enterprise from '@gatehouse/plugin-enterprise';
import { loadConfig } from '@gatehouse/server';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { openDatabase } from '../../../core/store/db';
import { type MigrationOwner, migrateLatest, pluginMigrations } from '../../../core/store/migrate';
import * as connectors from '../../../plugins/enterprise/migrations/20261210000000_connectors';
import * as tokens from '../../../plugins/enterprise/migrations/20261211000000_connector_tokens';
import { communityEditionMigrations } from '../../support/migrations';
import { dropDatabase, freshDatabase } from '../../support/server';

/** The connectors migration (connectors, and which container each container device is): up with rows, down, up. */
describe('store migrations: connectors (enterprise)', () => {
  let db: Knex;
  let url: string | undefined;
  const tenant = '00000000-0000-4000-8000-00000000c001';
  const owner = 'c'.repeat(24);
  const connector = '00000000-0000-4000-8000-00000000c0c0';
  const device = 'd'.repeat(64);

  before(async () => {
    url = await freshDatabase();
    db = openDatabase(loadConfig({}, { database: { url, poolMax: 2 } }), { memory: !url });
    await migrateLatest(db, [...communityEditionMigrations, pluginMigrations(enterprise) as MigrationOwner]);
    await db('users').insert({
      id: owner,
      name: 'Cy',
      username: 'cy',
      email: 'cy@example.com',
      password_hash: 'x',
    });
    await db('namespaces').insert({ tenant_id: tenant, name: 'cy', owner });
  });
  after(async () => {
    await db?.destroy();
    await dropDatabase(url);
  });

  it('holds a connector and its container devices, with the checks the services rely on', async () => {
    await db('connectors').insert({ uid: connector, tenant_id: tenant, address: 'engine', port: 2376 });
    const row = await db('connectors').first();
    expect(row).to.include({
      enable: true,
      secure: false,
      tls: null,
      status_state: 'disconnected',
      status_message: '',
    });
    const badPort = await db('connectors')
      .insert({ uid: '00000000-0000-4000-8000-00000000c0c1', tenant_id: tenant, address: 'x', port: 65536 })
      .catch((e: { code?: string }) => e);
    expect(badPort).to.include({ code: '23514' });

    await db('devices').insert({
      uid: device,
      tenant_id: tenant,
      name: 'web-1',
      identity: JSON.stringify({ mac: 'f'.repeat(64) }),
      info: JSON.stringify({
        id: 'container',
        pretty_name: 'img',
        version: '',
        arch: '',
        platform: 'docker',
      }),
      kind: 'container',
      public_key: '',
    });
    await db('connector_containers').insert({
      device_uid: device,
      connector_uid: connector,
      container_id: 'f'.repeat(64),
    });
    expect((await db('connector_containers').first()).running).to.equal(false);
    const orphan = await db('connector_containers')
      .insert({ device_uid: 'e'.repeat(64), connector_uid: connector, container_id: 'e'.repeat(64) })
      .catch((e: { code?: string }) => e);
    expect(orphan).to.include({ code: '23503' });

    // Deleting the connector takes its mapping, not the device; deleting the namespace takes everything.
    await db('connectors').where({ uid: connector }).delete();
    const count = async (table: string) => Number((await db(table).count({ n: '*' }))[0]?.n);
    expect(await count('connector_containers')).to.equal(0);
    expect(await count('devices')).to.equal(1);
    await db('namespaces').where({ tenant_id: tenant }).delete();
    expect(await count('devices')).to.equal(0);
  });

  it('gives a container to its older connector when two listed it, and one connector per container after', async () => {
    await tokens.down(db);
    const other = '00000000-0000-4000-8000-00000000c002';
    await db('namespaces').insert({ tenant_id: tenant, name: 'cy', owner });
    await db('namespaces').insert({ tenant_id: other, name: 'eve', owner });
    const older = '00000000-0000-4000-8000-0000000000a1';
    const newer = '00000000-0000-4000-8000-0000000000a2';
    await db('connectors').insert([
      {
        uid: older,
        tenant_id: tenant,
        address: 'engine',
        port: 2375,
        created_at: new Date(Date.now() - 60_000),
      },
      { uid: newer, tenant_id: other, address: 'engine', port: 2375, created_at: new Date() },
    ]);
    const container = 'a'.repeat(64);
    const device = (uid: string, tenantId: string, status: string) => ({
      uid,
      tenant_id: tenantId,
      name: 'box',
      identity: JSON.stringify({ mac: container }),
      info: JSON.stringify({
        id: 'container',
        pretty_name: 'img',
        version: '',
        arch: '',
        platform: 'docker',
      }),
      kind: 'container',
      public_key: '',
      status,
    });
    await db('devices').insert([
      device('1'.repeat(64), tenant, 'accepted'),
      device('2'.repeat(64), other, 'accepted'),
    ]);
    await db('connector_containers').insert([
      { device_uid: '1'.repeat(64), connector_uid: older, container_id: container },
      { device_uid: '2'.repeat(64), connector_uid: newer, container_id: container },
    ]);

    await tokens.up(db);
    expect(await db('connector_containers').select('device_uid', 'connector_uid')).to.deep.equal([
      { device_uid: '1'.repeat(64), connector_uid: older },
    ]);
    // The newer connector's accepted device keeps its slot as a removed one; the older's is untouched.
    expect(
      (
        await db('devices')
          .where({ uid: '2'.repeat(64) })
          .first()
      ).status,
    ).to.equal('removed');
    expect(
      (
        await db('devices')
          .where({ uid: '1'.repeat(64) })
          .first()
      ).status,
    ).to.equal('accepted');
    const rows = await db('connectors').select('token_hash', 'status_state', 'status_message');
    for (const row of rows) {
      expect(row.token_hash).to.equal(null);
      expect(row.status_state).to.equal('disconnected');
      expect(row.status_message).to.match(/^waiting for its connector/);
    }
    const twice = await db('connector_containers')
      .insert({ device_uid: '2'.repeat(64), connector_uid: newer, container_id: container })
      .catch((e: { code?: string }) => e);
    expect(twice).to.include({ code: '23505' });
    await db('namespaces').delete();
  });

  it('goes down and up again', async () => {
    await tokens.down(db);
    expect(await db.schema.hasColumn('connectors', 'token_hash')).to.equal(false);
    await connectors.down(db);
    expect(await db.schema.hasTable('connectors')).to.equal(false);
    expect(await db.schema.hasTable('connector_containers')).to.equal(false);
    await connectors.up(db);
    expect(await db.schema.hasTable('connector_containers')).to.equal(true);
  });
});
