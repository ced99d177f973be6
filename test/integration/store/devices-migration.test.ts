import { expect } from 'chai';
import type { Knex } from 'knex';
import * as devices from '../../../plugins/community/migrations/20261121002000_devices';
import * as devicesKind from '../../../plugins/community/migrations/20261201000000_devices_kind';
import * as deviceCounts from '../../../plugins/community/migrations/20261204000000_device_counts';
import * as deviceNameSearch from '../../../plugins/community/migrations/20261205000000_device_name_search';
import * as deviceTagCounts from '../../../plugins/community/migrations/20261206000000_device_tag_counts';
import { type MigratedStore, migratedStore } from '../../support/store';

/** The devices and tunnels migration: up with rows and its constraints, then down and up again. */
describe('store migrations: devices and tunnels', () => {
  let db: Knex;

  /** The migrations after `devices_kind` that build on `devices`, in the order the migrator runs them. */
  const later = [deviceCounts, deviceNameSearch, deviceTagCounts];
  /** Takes them down last-first and puts them back first-first, as the migrator would. */
  const laterDown = async () => {
    for (const m of [...later].reverse()) await m.down(db);
  };
  const laterUp = async () => {
    for (const m of later) await m.up(db);
  };
  let store: MigratedStore;
  const tenant = '00000000-0000-4000-8000-00000000d001';
  const owner = 'd'.repeat(24);
  const uid = (c: string) => c.repeat(64);

  before(async () => {
    store = await migratedStore({ owner, username: 'dee', tenant, poolMax: 2 });
    db = store.db;
  });
  after(async () => {
    await store?.close();
  });

  const device = (c: string, extra: Record<string, unknown> = {}) => ({
    uid: uid(c),
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

  it('holds devices with their defaults and constraints', async () => {
    await db('devices').insert(device('a'));
    const row = await db('devices')
      .where({ uid: uid('a') })
      .first();
    expect(row).to.include({ status: 'pending', connected: false, public_url: false, kind: 'device' });
    expect(row.tags).to.deep.equal([]);
    expect(row.identity).to.deep.equal({ mac: '02:00:00:00:00:0a' });

    const badStatus = await db('devices')
      .insert(device('b', { status: 'lost' }))
      .catch((e) => e);
    expect(badStatus).to.include({ code: '23514' });

    // Two accepted devices never share a name (case-insensitively); pending ones may.
    await db('devices').insert(device('c', { name: 'Twin', status: 'accepted' }));
    await db('devices').insert(device('d', { name: 'twin' }));
    const clash = await db('devices')
      .where({ uid: uid('d') })
      .update({ status: 'accepted' })
      .catch((e) => e);
    expect(clash).to.include({ code: '23505', constraint: 'devices_accepted_name_key' });

    await db('devices')
      .where({ uid: uid('a') })
      .update({ tags: db.raw(`'{prod,web}'::text[]`) });
    const tagged = await db('devices')
      .whereRaw('tags @> ?::text[]', [['web']])
      .select('uid');
    expect(tagged.map((r) => r.uid)).to.deep.equal([uid('a')]);
  });

  it('holds tunnels that go with their device and namespace', async () => {
    await db('tunnels').insert({
      address: 'f'.repeat(32),
      tenant_id: tenant,
      device_uid: uid('a'),
      host: '127.0.0.1',
      port: 8080,
      ttl: '9223372036',
      expires_at: db.raw(`now() + make_interval(secs => 9223372036)`),
    });
    const t = await db('tunnels').first();
    expect(Number(t.ttl)).to.equal(9223372036);
    await db('devices')
      .where({ uid: uid('a') })
      .delete();
    expect(await db('tunnels')).to.deep.equal([]);
  });

  it('files every agent, one in a container too, as a device, and goes back', async () => {
    // The kept counts' triggers name `kind`: they go first and come back last, as the migrator would.
    await laterDown();
    await devicesKind.down(db);
    // Rows as the old split wrote them: an agent inside Docker reported docker and was filed under containers.
    const docker = (c: string) =>
      device(c, {
        platform: 'docker',
        info: JSON.stringify({
          id: 'alpine',
          pretty_name: 'Alpine',
          version: '1',
          arch: 'amd64',
          platform: 'docker',
        }),
      });
    await db('devices').insert([docker('f'), device('9', { platform: 'native' })]);
    await devicesKind.up(db);
    const rows = (await db('devices')
      .whereIn('uid', [uid('f'), uid('9')])
      .orderBy('uid')) as {
      uid: string;
      kind: string;
      info: { platform: string };
    }[];
    expect(rows.map((r) => [r.uid, r.kind, r.info.platform])).to.deep.equal([
      [uid('9'), 'device', 'native'],
      [uid('f'), 'device', 'docker'],
    ]);
    expect((await db('devices').insert(device('8')).returning('kind'))[0].kind).to.equal('device');
    const bad = await db('devices')
      .insert(device('7', { kind: 'docker' }))
      .catch((e) => e);
    expect(bad).to.include({ code: '23514' });
    // Down restores the platform split from what each agent reported.
    await devicesKind.down(db);
    expect(
      (
        await db('devices')
          .where({ uid: uid('f') })
          .first()
      ).platform,
    ).to.equal('docker');
    expect(
      (
        await db('devices')
          .where({ uid: uid('9') })
          .first()
      ).platform,
    ).to.equal('native');
    await devicesKind.up(db);
    await laterUp();
  });

  it('goes down and up again', async () => {
    await laterDown();
    await devicesKind.down(db);
    await devices.down(db);
    expect(await db.schema.hasTable('devices')).to.equal(false);
    expect(await db.schema.hasTable('tunnels')).to.equal(false);
    await devices.up(db);
    await devicesKind.up(db);
    await laterUp();
    expect(await db.schema.hasTable('tunnels')).to.equal(true);
    await db('devices').insert(device('e'));
    await db('namespaces').where({ tenant_id: tenant }).delete();
    expect(await db('devices')).to.deep.equal([]);
  });
});
