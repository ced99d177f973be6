import type { RegisterContext } from '@gatehouse/core';
import type { Knex } from 'knex';
import type { TunnelAdmission } from '../agent-tunnels/device-peers';
import type { ConsoleEvents } from '../events/service';

type Changed = { uid: string; tenant_id: string };

/**
 * The devices side of the tunnel hub: only accepted devices hold a tunnel, and the hub's view of who is connected
 * lands in `devices.connected` and `devices.last_seen`, batched where the hub batches (one write per ping round).
 * The hub reaches it through its `tunnel.*` hooks (registerPresence), so the hub depends on no plugin and the
 * devices service may depend on the hub.
 *
 * Tunnels that come up are written together too: after a server restart every agent reconnects at once, and one
 * UPDATE per tunnel was a third of the statements of that storm (bench/RESULTS.md, "Many agents on one server").
 * Arrivals wait for the end of the event-loop turn, or for the write before them, and then go in one statement (at
 * most `ARRIVALS_PER_WRITE`). The hub runs one device's presence writes in order (its `tunnel.online` before its
 * `tunnel.offline`), and each arrival's promise settles with the statement that wrote it, so a tunnel that closes
 * at once still ends offline. A batch that fails is written again one row at a time, so that one bad row or a lost
 * lock wait costs no other device its state.
 *
 * The writes of several rows run one at a time in this process, and lock their rows in uid order, so that neither
 * they nor those of another instance sharing the store can wait on each other's row locks.
 */
export class DevicePresence {
  private readonly db: Knex;
  /** The batch of tunnels up that still takes arrivals: uid to remote address, and what they wait for. */
  private batch?: { rows: Map<string, string>; written: Promise<void> };
  /** The tail of the writes of several rows (arrivals, ping rounds, shutdown), which run one after another. */
  private writes: Promise<unknown> = Promise.resolve();
  private readonly events: ConsoleEvents | undefined;

  constructor(deps: { db: Knex; consoleEvents?: ConsoleEvents }) {
    this.db = deps.db;
    this.events = deps.consoleEvents;
  }

  /** Tells the consoles of each written device's namespace that it came up or went down. */
  private told(rows: Changed[], online: boolean): void {
    for (const row of rows) {
      this.events?.publish(row.tenant_id, { kind: 'device.online', device: row.uid, online });
    }
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
    let batch = this.batch;
    if (!batch || batch.rows.size >= ARRIVALS_PER_WRITE) {
      // A new batch: written at the end of this turn, or once the writes queued before it are done. It takes
      // arrivals until its write starts (or it is full).
      const rows = new Map<string, string>();
      const written = new Promise<void>((resolve) => setImmediate(resolve)).then(() =>
        this.oneAtATime(() => {
          if (this.batch?.rows === rows) this.batch = undefined;
          return this.connect(rows);
        }),
      );
      this.batch = batch = { rows, written };
    }
    batch.rows.set(uid, remoteAddr);
    return batch.written;
  }

  async offline(uids: string[]): Promise<void> {
    this.told(await this.lockedUpdate(uids, 'connected = false'), false);
  }

  async alive(uids: string[]): Promise<void> {
    // Rows the agent's own auth call refreshed lately are left alone: no write, no row lock against that call.
    await this.lockedUpdate(uids, 'last_seen = now()', `last_seen < now() - interval '10 seconds'`);
  }

  private async connect(batch: Map<string, string>): Promise<void> {
    const up = async (uids: string[], addrs: string[]) => {
      const written = await this.db.raw<{ rows: Changed[] }>(
        `with up as (select * from unnest(?::text[], ?::text[]) as up(uid, remote_addr)),
              locked as (select devices.uid from devices join up using (uid) order by devices.uid for no key update of devices)
         update devices set connected = true, last_seen = now(), remote_addr = up.remote_addr
           from up, locked
          where devices.uid = up.uid and locked.uid = up.uid
         returning devices.uid, devices.tenant_id`,
        [uids, addrs],
      );
      this.told(written.rows, true);
    };
    try {
      await up([...batch.keys()], [...batch.values()]);
    } catch (err) {
      if (batch.size === 1) throw err;
      // One at a time, as before batching: each device keeps its own outcome.
      const failed = await Promise.allSettled([...batch].map(([uid, addr]) => up([uid], [addr])));
      const first = failed.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (first) throw first.reason;
    }
  }

  /**
   * `UPDATE devices SET <assignment>` for these uids (and `condition`), with the rows locked in uid order first.
   * Several rows go through the queue; one row cannot wait on another, so it goes at once.
   */
  private async lockedUpdate(uids: string[], assignment: string, condition = 'true'): Promise<Changed[]> {
    if (uids.length === 0) return [];
    const write = () =>
      this.db.raw<{ rows: Changed[] }>(
        `with locked as (select uid from devices where uid = any(?::text[]) and ${condition}
                          order by uid for no key update)
         update devices set ${assignment} from locked where devices.uid = locked.uid
         returning devices.uid, devices.tenant_id`,
        [uids],
      );
    return (await (uids.length > 1 ? this.oneAtATime(write) : write())).rows;
  }

  /** Runs `write` after the writes of several rows before it, whether they succeeded or not. */
  private oneAtATime<T>(write: () => PromiseLike<T>): Promise<T> {
    const run = this.writes.then(write, write);
    this.writes = run.catch(() => undefined);
    return run;
  }
}

/** The most tunnels one statement sets connected: a reconnect storm is written in statements of this size. */
const ARRIVALS_PER_WRITE = 500;

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
