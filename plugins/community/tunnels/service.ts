import { randomBytes } from 'node:crypto';
import { NotFound, paginate, TenantStore } from '@gatehouse/core';
import type { Knex } from 'knex';
import type { Context } from 'koa';

export interface TunnelRow {
  address: string;
  tenant_id: string;
  device_uid: string;
  host: string;
  port: number;
  ttl: string | number;
  expires_at: Date | null;
  created_at: Date;
}

/** The Tunnel entity (SPEC.md section 3). `expires_in` is when it stops answering; null for ttl -1. */
export interface TunnelView {
  address: string;
  namespace: string;
  device: string;
  host: string;
  port: number;
  ttl: number;
  expires_in: string | null;
  created_at: string;
}

/** HTTP tunnels of a device: `<address>.<tunnels domain>` reaches host:port through the device's agent. */
export class TunnelService {
  private readonly db: Knex;

  constructor(deps: { db: Knex }) {
    this.db = deps.db;
  }

  async list(
    tenantId: string,
    uid: string,
    query: { page: number; per_page: number },
    ctx: Context,
  ): Promise<TunnelView[]> {
    const store = new TenantStore(this.db, tenantId);
    const namespace = await this.device(store, uid);
    const qb = store
      .table('tunnels')
      .where({ device_uid: uid })
      .where((b) => b.whereNull('expires_at').orWhere('expires_at', '>', this.db.fn.now()))
      .select('*');
    const rows = await paginate<TunnelRow>(ctx, qb, query, { column: 'created_at', direction: 'desc' });
    return rows.map((r) => view(r, namespace));
  }

  async create(
    tenantId: string,
    uid: string,
    body: { host: string; port: number; ttl: number },
  ): Promise<TunnelView> {
    const store = new TenantStore(this.db, tenantId);
    const namespace = await this.device(store, uid);
    const [row] = (await store
      .insert('tunnels', {
        address: randomBytes(16).toString('hex'),
        device_uid: uid,
        host: body.host,
        port: body.port,
        ttl: body.ttl,
        expires_at: body.ttl < 0 ? null : this.db.raw(`now() + make_interval(secs => ?)`, [body.ttl]),
      })
      .returning('*')) as TunnelRow[];
    return view(row as TunnelRow, namespace);
  }

  async delete(tenantId: string, uid: string, address: string): Promise<void> {
    const store = new TenantStore(this.db, tenantId);
    await this.device(store, uid);
    // `returning`, not the affected-row count: the embedded store's driver does not report counts.
    const gone = await store
      .table('tunnels')
      .where({ device_uid: uid, address })
      .delete()
      .returning('address');
    if (gone.length === 0) throw new NotFound('tunnel');
  }

  /** The live tunnel at an address, for the proxy: unexpired, with its device's status. */
  async resolve(
    address: string,
  ): Promise<(TunnelRow & { device_status: string; expires_in_ms: number | null }) | undefined> {
    const row = (await this.db('tunnels')
      .join('devices', 'devices.uid', 'tunnels.device_uid')
      .where('tunnels.address', address)
      .where((b) => b.whereNull('tunnels.expires_at').orWhere('tunnels.expires_at', '>', this.db.fn.now()))
      .first(
        'tunnels.*',
        'devices.status as device_status',
        // Measured by the database clock, the same one that decides expiry in the query.
        this.db.raw('(extract(epoch from tunnels.expires_at - now()) * 1000)::float8 as expires_in_ms'),
      )) as (TunnelRow & { device_status: string; expires_in_ms: number | null }) | undefined;
    return row;
  }

  /** The namespace name of a device of this tenant (any platform, not removed), or 404. */
  private async device(store: TenantStore, uid: string): Promise<string> {
    const row = (await store
      .table('devices')
      .join('namespaces', 'namespaces.tenant_id', 'devices.tenant_id')
      .where('devices.uid', uid)
      .whereNot('devices.status', 'removed')
      .first('namespaces.name as namespace')) as { namespace: string } | undefined;
    if (!row) throw new NotFound('device');
    return row.namespace;
  }
}

function view(row: TunnelRow, namespace: string): TunnelView {
  return {
    address: row.address,
    namespace,
    device: row.device_uid,
    host: row.host,
    port: row.port,
    ttl: Number(row.ttl),
    expires_in: row.expires_at ? new Date(row.expires_at).toISOString() : null,
    created_at: new Date(row.created_at).toISOString(),
  };
}
