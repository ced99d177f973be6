import type { RegisterContext, TunnelAdmission } from '@gatehouse/core';
import type { Knex } from 'knex';

/**
 * The devices side of the tunnel hub: only accepted devices hold a tunnel, and the hub's view of who is connected
 * lands in `devices.connected` and `devices.last_seen`, batched where the hub batches (one write per ping round).
 * The hub reaches it through its `tunnel.*` hooks (registerPresence), so the hub depends on no plugin and the
 * devices service may depend on the hub.
 *
 * Tunnels that come up are written together too: after a server restart every agent reconnects at once, and one
 * UPDATE per tunnel was a third of the statements of that storm (bench/RESULTS.md, "Many agents on one server").
 * Arrivals wait for the end of the event-loop turn, or for the write before them, and then go in one statement.
 * The hub runs one device's presence writes in order (its `tunnel.online` before its `tunnel.offline`), and each
 * arrival's promise settles with the statement that wrote it, so a tunnel that closes at once still ends offline.
 * The writes of several rows run one at a time, so that two of them never wait for each other's row locks.
 */
export class DevicePresence {
  private readonly db: Knex;
  /** Tunnels up since the last write began: uid to remote address. */
  private arrivals = new Map<string, string>();
  /** What the arrivals collected so far will settle with; set while some are waiting. */
  private arrivalsWritten?: Promise<void>;
  /** The tail of the writes of several rows (arrivals, ping rounds, shutdown), which run one after another. */
  private writes: Promise<unknown> = Promise.resolve();

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

  /** Settles once the device is written connected, together with the other tunnels that came up meanwhile. */
  online(uid: string, remoteAddr: string): Promise<void> {
    this.arrivals.set(uid, remoteAddr);
    this.arrivalsWritten ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() =>
      this.oneAtATime(() => {
        const batch = this.arrivals;
        this.arrivals = new Map();
        this.arrivalsWritten = undefined;
        return this.db.raw(
          `update devices set connected = true, last_seen = now(), remote_addr = up.remote_addr
             from unnest(?::text[], ?::text[]) as up(uid, remote_addr)
            where devices.uid = up.uid`,
          [[...batch.keys()], [...batch.values()]],
        );
      }),
    );
    return this.arrivalsWritten;
  }

  async offline(uids: string[]): Promise<void> {
    const write = () =>
      this.db('devices').whereRaw('uid = any(?::text[])', [uids]).update({ connected: false });
    await (uids.length > 1 ? this.oneAtATime(write) : write());
  }

  async alive(uids: string[]): Promise<void> {
    // Rows the agent's own auth call refreshed lately are left alone: no write, no row lock against that call.
    await this.oneAtATime(() =>
      this.db('devices')
        .whereRaw('uid = any(?::text[])', [uids])
        .whereRaw(`last_seen < now() - interval '10 seconds'`)
        .update({ last_seen: this.db.fn.now() }),
    );
  }

  /** Runs `write` after the writes of several rows before it, whether they succeeded or not. */
  private oneAtATime<T>(write: () => PromiseLike<T>): Promise<T> {
    const run = this.writes.then(write, write);
    this.writes = run.catch(() => undefined);
    return run;
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
