import { loadConfig } from '@gatehouse/server';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { openDatabase } from '../../../core/store/db';
import { migrateLatest } from '../../../core/store/migrate';
import * as gateway from '../../../plugins/community/migrations/20261121003000_gateway';
import * as recordCompression from '../../../plugins/community/migrations/20261121004000_record_compression';
import * as sessionShares from '../../../plugins/community/migrations/20261224000000_session_shares';
import { communityEditionMigrations } from '../../support/migrations';
import { dropDatabase, freshDatabase } from '../../support/server';

/** The gateway migration (public keys, firewall rules, sessions, events, records): up with rows, down, up again. */
describe('store migrations: public keys, firewall rules and sessions', () => {
  let db: Knex;
  let url: string | undefined;
  const tenant = '00000000-0000-4000-8000-00000000a501';
  const owner = 'e'.repeat(24);
  const session = '5'.repeat(64);
  /** A session row with only what the table requires. */
  const sessionRow = {
    uid: session,
    tenant_id: tenant,
    device_uid: 'd'.repeat(64),
    username: 'root',
    ip_address: '127.0.0.1',
  };

  before(async () => {
    url = await freshDatabase();
    db = openDatabase(loadConfig({}, { database: { url, poolMax: 2 } }), { memory: !url });
    await migrateLatest(db, communityEditionMigrations);
    await db('users').insert({
      id: owner,
      name: 'Eve',
      username: 'eve',
      email: 'eve@example.com',
      password_hash: 'x',
    });
    await db('namespaces').insert({ tenant_id: tenant, name: 'eve', owner });
  });
  after(async () => {
    await db?.destroy();
    await dropDatabase(url);
  });

  it('holds rows with the keys and checks the services rely on', async () => {
    const key = {
      tenant_id: tenant,
      fingerprint: 'aa:'.repeat(15) + 'aa',
      data: 'x',
      name: 'k',
      username: '.*',
    };
    await db('public_keys').insert({ ...key, filter_tags: ['prod'] });
    const dup = await db('public_keys')
      .insert(key)
      .catch((e: { code?: string; constraint?: string }) => e);
    expect(dup).to.include({ code: '23505', constraint: 'public_keys_pkey' });
    expect((await db('public_keys').first()).filter_tags).to.deep.equal(['prod']);

    const rule = { id: 'f'.repeat(24), tenant_id: tenant, priority: 1, source_ip: '.*', username: '.*' };
    const badAction = await db('firewall_rules')
      .insert({ ...rule, action: 'maybe' })
      .catch((e: { code?: string }) => e);
    expect(badAction).to.include({ code: '23514' });
    await db('firewall_rules').insert({ ...rule, action: 'deny', filter_hostname: '.*' });
    expect((await db('firewall_rules').first()).active).to.equal(true);

    await db('sessions').insert(sessionRow);
    const row = await db('sessions').first();
    expect(row).to.include({ authenticated: false, recorded: false, type: 'term', term: '' });
    expect(row.closed_at).to.equal(null);
    await db('session_events').insert({
      session_uid: session,
      type: 'shell',
      seat: 0,
      data: JSON.stringify({ a: 1 }),
    });
    await db('session_records').insert({
      session_uid: session,
      tenant_id: tenant,
      seat: 0,
      message: 'hi',
      time: new Date(),
      width: 80,
      height: 24,
    });
    const orphan = await db('session_events')
      .insert({ session_uid: '0'.repeat(64), type: 'x' })
      .catch((e: { code?: string }) => e);
    expect(orphan).to.include({ code: '23503' });

    // Deleting a session takes its events and records; deleting the namespace takes everything.
    await db('namespaces').where({ tenant_id: tenant }).delete();
    for (const t of ['public_keys', 'firewall_rules', 'sessions', 'session_events', 'session_records']) {
      const [{ count }] = (await db(t).count({ count: '*' })) as [{ count: string | number }];
      expect(Number(count), t).to.equal(0);
    }
  });

  it('compresses recorded output with lz4 where the server has it, and reads it back unchanged', async () => {
    await db('namespaces').insert({ tenant_id: tenant, name: 'eve', owner });
    await db('sessions').insert(sessionRow);
    const message = 'drwxr-xr-x 2 root root 4096 lab\r\n'.repeat(4000);
    const record = {
      session_uid: session,
      tenant_id: tenant,
      seat: 0,
      time: new Date(),
      width: 80,
      height: 24,
    };
    const compression = async () => {
      const row = (await db('session_records')
        .select(db.raw('pg_column_compression(message) as method'), 'message')
        .orderBy('id', 'desc')
        .first()) as { method: string; message: string };
      expect(row.message).to.equal(message);
      return row.method;
    };
    const [{ lz4 }] = (await db
      .select(db.raw(`'lz4' = any(enumvals) as lz4`))
      .from('pg_settings')
      .where('name', 'default_toast_compression')) as [{ lz4: boolean }];
    await db('session_records').insert({ ...record, message });
    expect(await compression()).to.equal(lz4 ? 'lz4' : 'pglz');

    // Down puts the default back (pglz); rows written either way read the same.
    await recordCompression.down(db);
    await db('session_records').insert({ ...record, message });
    expect(await compression()).to.equal('pglz');
    await recordCompression.up(db);
    await db('namespaces').where({ tenant_id: tenant }).delete();
  });

  it('goes down and up again', async () => {
    // Share links refer to sessions: that later migration goes down first, as a rollback of both would.
    await sessionShares.down(db);
    await gateway.down(db);
    for (const t of ['public_keys', 'firewall_rules', 'sessions', 'session_events', 'session_records']) {
      expect(await db.schema.hasTable(t), t).to.equal(false);
    }
    await gateway.up(db);
    await sessionShares.up(db);
    expect(await db.schema.hasTable('session_records')).to.equal(true);
    expect(await db.schema.hasTable('session_shares')).to.equal(true);
  });
});
