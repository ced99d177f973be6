import { randomBytes } from 'node:crypto';
import { listPage, NotFound, type Page, type TenantStore } from '@gatehouse/core';
import { raw } from 'objection';
import { Device } from '../devices/model';
import { Tunnel } from './model';
import type { TunnelView } from './schemas';

/**
 * HTTP tunnels of the caller's devices (request scope): `<address>.<tunnels domain>` reaches host:port through the
 * device's agent. The proxy finds a tunnel by its address, across namespaces (tunnels/proxy.ts).
 */
export class TunnelService {
  private readonly tenant: TenantStore;

  constructor(deps: { tenant: TenantStore }) {
    this.tenant = deps.tenant;
  }

  async list(uid: string, query: { page: number; per_page: number }): Promise<Page<TunnelView>> {
    const namespace = await this.device(uid);
    const q = this.tenant
      .query(Tunnel)
      .where({ device_uid: uid })
      .where((b) => b.whereNull('expires_at').orWhere('expires_at', '>', raw('now()')));
    const page = await listPage(q, query, { column: 'created_at', direction: 'desc' });
    return { items: page.items.map((r) => view(r, namespace)), total: page.total };
  }

  async create(uid: string, body: { host: string; port: number; ttl: number }): Promise<TunnelView> {
    const namespace = await this.device(uid);
    const row = await this.tenant
      .query(Tunnel)
      .insert({
        address: randomBytes(16).toString('hex'),
        device_uid: uid,
        host: body.host,
        port: body.port,
        ttl: body.ttl,
        expires_at: body.ttl < 0 ? null : (raw('now() + make_interval(secs => ?)', [body.ttl]) as never),
      })
      .returning('*');
    return view(row, namespace);
  }

  async delete(uid: string, address: string): Promise<void> {
    await this.device(uid);
    const gone = await this.tenant.query(Tunnel).delete().where({ device_uid: uid, address });
    if (gone === 0) throw new NotFound('tunnel');
  }

  /** The namespace name of a device of this tenant (any kind, not removed), or 404. */
  private async device(uid: string): Promise<string> {
    const row = (await this.tenant
      .query(Device)
      .findById(uid)
      .whereNot('devices.status', 'removed')
      .joinRelated('namespace')
      .select('namespace.name as namespace_name')) as (Device & { namespace_name: string }) | undefined;
    if (!row) throw new NotFound('device');
    return row.namespace_name;
  }
}

function view(row: Tunnel, namespace: string): TunnelView {
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
