import type { RegisterContext, TunnelAdmission } from '@gatehouse/core';
import type { Knex } from 'knex';

/**
 * The devices side of the tunnel hub: only accepted devices hold a tunnel, and the hub's view of who is connected
 * lands in `devices.connected` and `devices.last_seen`, batched where the hub batches (one write per ping round).
 * The hub reaches it through its `tunnel.*` hooks (registerPresence), so the hub depends on no plugin and the
 * devices service may depend on the hub.
 */
export class DevicePresence {
  private readonly db: Knex;

  constructor(deps: { db: Knex }) {
    this.db = deps.db;
  }

  async admit(device: { uid: string; tenantId: string }): Promise<TunnelAdmission> {
    // Both columns: a token of one namespace never admits a device of another.
    const row = (await this.db('devices')
      .where({ uid: device.uid, tenant_id: device.tenantId })
      .first('status', 'public_key')) as { status: string; public_key: string } | undefined;
    if (!row) return { ok: false, status: 404, message: 'device not found' };
    if (row.status !== 'accepted') {
      return { ok: false, status: 403, message: `device is ${row.status}`, deviceStatus: row.status };
    }
    return { ok: true, publicKey: row.public_key };
  }

  async online(uid: string, remoteAddr: string): Promise<void> {
    await this.db('devices')
      .where({ uid })
      .update({ connected: true, last_seen: this.db.fn.now(), remote_addr: remoteAddr });
  }

  async offline(uids: string[]): Promise<void> {
    await this.db('devices').whereRaw('uid = any(?::text[])', [uids]).update({ connected: false });
  }

  async alive(uids: string[]): Promise<void> {
    // Rows the agent's own auth call refreshed lately are left alone: no write, no row lock against that call.
    await this.db('devices')
      .whereRaw('uid = any(?::text[])', [uids])
      .whereRaw(`last_seen < now() - interval '10 seconds'`)
      .update({ last_seen: this.db.fn.now() });
  }
}

/** Answers the tunnel hub's hooks with the devices' presence (`tunnelPresence` in the container). */
export function registerPresence(ctx: RegisterContext): void {
  const presence = () => ctx.resolve('tunnelPresence');
  ctx.hooks.on('tunnel.admit', async (asked) => {
    asked.admission = await presence().admit(asked.device);
  });
  ctx.hooks.on('tunnel.online', ({ uid, remoteAddr }) => presence().online(uid, remoteAddr));
  ctx.hooks.on('tunnel.offline', ({ uids }) => presence().offline(uids));
  ctx.hooks.on('tunnel.alive', ({ uids }) => presence().alive(uids));
}
