import { loadConfig } from '@gatehouse/server';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { openDatabase } from '../../../core/store/db';
import { migrateLatest } from '../../../core/store/migrate';
import { TenantStore } from '../../../core/store/tenant';
import { ApiKey } from '../../../plugins/community/apikeys/model';
import { Device } from '../../../plugins/community/devices/model';
import { Session } from '../../../plugins/community/sessions/model';
import { User } from '../../../plugins/community/users/model';
import { communityEditionMigrations } from '../../support/migrations';
import { dropDatabase, freshDatabase } from '../../support/server';

/**
 * Tenant scoping is structural: a tenant model's query is bound to one tenant by the tenant
 * store, cannot be built without one, and a model class serves any number of stores in one process.
 */
describe('store: tenant models', () => {
  const a = '00000000-0000-4000-8000-00000000b001';
  const b = '00000000-0000-4000-8000-00000000b002';
  const owner = 'b'.repeat(24);
  const stores: { db: Knex; url: string | undefined }[] = [];
  let db: Knex;

  async function openStore(): Promise<Knex> {
    const url = await freshDatabase();
    const store = openDatabase(loadConfig({}, { database: { url, poolMax: 2 } }), { memory: !url });
    stores.push({ db: store, url });
    await migrateLatest(store, communityEditionMigrations);
    await store('users').insert({
      id: owner,
      name: 'Bea',
      username: 'bea',
      email: 'bea@example.com',
      password_hash: 'x',
    });
    await store('namespaces').insert([
      { tenant_id: a, name: 'bea', owner },
      { tenant_id: b, name: 'bea-two', owner },
    ]);
    return store;
  }

  const key = (name: string, digest: string) => ({
    key_digest: digest.padEnd(64, '0'),
    name,
    created_by: owner,
    role: 'observer' as const,
    expires_in: -1,
  });

  const device = (uid: string, tenant: string, name: string) => ({
    uid: uid.padEnd(64, '0'),
    tenant_id: tenant,
    name,
    identity: JSON.stringify({ mac: '02:00:00:00:00:01' }),
    info: JSON.stringify({
      id: 'debian',
      pretty_name: 'Debian',
      version: '1',
      arch: 'amd64',
      platform: 'native',
    }),
    public_key: 'k',
    status: 'accepted',
  });

  before(async function () {
    this.timeout(60_000);
    db = await openStore();
    const tenantA = new TenantStore(db, a);
    const tenantB = new TenantStore(db, b);
    await tenantA.query(ApiKey).insert(key('a-key', 'a1'));
    await tenantB.query(ApiKey).insert(key('b-key', 'b1'));
    await db('devices').insert([device('da', a, 'dev-a'), device('db', b, 'dev-b')]);
    // A session of A naming B's device: a relation must not reach across the tenant line either.
    await db('sessions').insert([
      {
        uid: 'sa'.padEnd(64, '0'),
        tenant_id: a,
        device_uid: 'da'.padEnd(64, '0'),
        username: 'u',
        ip_address: 'x',
      },
      {
        uid: 'sx'.padEnd(64, '0'),
        tenant_id: a,
        device_uid: 'db'.padEnd(64, '0'),
        username: 'u',
        ip_address: 'x',
      },
    ]);
  });

  after(async () => {
    for (const s of stores) {
      await s.db.destroy();
      await dropDatabase(s.url);
    }
  });

  it('refuses to build a tenant model query that was given no tenant', async () => {
    const bare = ApiKey.bindKnex(db);
    let err: unknown;
    try {
      await bare.query();
    } catch (e) {
      err = e;
    }
    expect(String(err)).to.match(/ApiKey.*tenant/);
    err = undefined;
    try {
      await bare.query().insert(key('loose', 'c1'));
    } catch (e) {
      err = e;
    }
    expect(String(err)).to.match(/tenant/);
    expect(await db('api_keys').where({ name: 'loose' }).first()).to.equal(undefined);
  });

  it("reads, changes and deletes only the bound tenant's rows", async () => {
    const tenantA = new TenantStore(db, a);
    const names = (await tenantA.query(ApiKey)).map((k) => k.name);
    expect(names).to.deep.equal(['a-key']);
    const bKey = 'b1'.padEnd(64, '0');
    expect(await tenantA.query(ApiKey).findById(bKey)).to.equal(undefined);
    expect(await tenantA.query(ApiKey).findById(bKey).patch({ name: 'taken' })).to.equal(0);
    expect(await tenantA.query(ApiKey).deleteById(bKey)).to.equal(0);
    expect(await tenantA.query(ApiKey).resultSize()).to.equal(1);
    const still = await db('api_keys').where({ key_digest: bKey }).first();
    expect(still.name).to.equal('b-key');
  });

  it('stamps inserted rows with the tenant and refuses rows of another', async () => {
    const tenantA = new TenantStore(db, a);
    const row = await tenantA.query(ApiKey).insert(key('stamped', 'a2')).returning('*');
    expect(row.tenant_id).to.equal(a);
    let err: unknown;
    try {
      await tenantA.query(ApiKey).insert({ ...key('foreign', 'a3'), tenant_id: b });
    } catch (e) {
      err = e;
    }
    expect(String(err)).to.match(/another tenant/);
    expect(await db('api_keys').where({ name: 'foreign' }).first()).to.equal(undefined);
  });

  it('cannot move a row to another tenant', async () => {
    const tenantA = new TenantStore(db, a);
    let err: unknown;
    try {
      await tenantA.query(ApiKey).findById('a1'.padEnd(64, '0')).patch({ tenant_id: b });
    } catch (e) {
      err = e;
    }
    expect(String(err)).to.match(/another tenant/);
    expect((await db('api_keys').where({ name: 'a-key' }).first()).tenant_id).to.equal(a);
  });

  it("binds related tenant models to the same tenant (a session's device)", async () => {
    const tenantA = new TenantStore(db, a);
    const sessions = await tenantA.query(Session).withGraphFetched('device').orderBy('uid');
    expect(sessions.map((s) => [s.uid.slice(0, 2), s.device?.name ?? null])).to.deep.equal([
      ['sa', 'dev-a'],
      ['sx', null],
    ]);
    const joined = await tenantA.query(Session).joinRelated('device').select('sessions.uid');
    expect(joined.map((s) => s.uid.slice(0, 2))).to.deep.equal(['sa']);
  });

  it('spans tenants only where a call says so', async () => {
    const all = await Device.acrossTenants(db).orderBy('name');
    expect(all.map((d) => d.name)).to.deep.equal(['dev-a', 'dev-b']);
    const users = await User.bindKnex(db).query();
    expect(users.map((u) => u.username)).to.deep.equal(['bea']);
  });

  it('serves two stores in one process: each bound model reads its own', async function () {
    this.timeout(60_000);
    const second = await openStore();
    await new TenantStore(second, a).query(ApiKey).insert(key('second-store', 'd1'));
    const first = (await new TenantStore(db, a).query(ApiKey)).map((k) => k.name).sort();
    const other = (await new TenantStore(second, a).query(ApiKey)).map((k) => k.name);
    expect(first).to.deep.equal(['a-key', 'stamped']);
    expect(other).to.deep.equal(['second-store']);
  });
});
