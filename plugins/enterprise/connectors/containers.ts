import { createHash } from 'node:crypto';
import type { Config, Logger } from '@gatehouse/core';
import { defaultDeviceName } from '@gatehouse/plugin-community';
import type { Knex } from 'knex';

/** A running container as the engine lists it. */
export interface EngineContainer {
  id: string;
  /** Without the leading slash the engine puts there. */
  name: string;
  image: string;
}

/** The engine a connector reaches, as its containers' device info shows it. */
export interface EngineFacts {
  arch: string;
  version: string;
}

/** The connector a watcher serves. */
export interface WatchedConnector {
  uid: string;
  tenant_id: string;
  created_at: Date;
  /** The address the connector's tunnel came from: its containers' remote address. */
  remoteAddr: string;
}

/** What became of a running container: listed as a device, or kept by an older connector of the same engine. */
export type Claim = 'listed' | 'taken' | 'skipped';

/** A container's device uid: stable for the namespace and the engine's container id (64 hex, like any device). */
export function containerDeviceUid(tenantId: string, containerId: string): string {
  return createHash('sha256').update(`${tenantId}|container|${containerId}`).digest('hex');
}

/**
 * The devices side of connectors: each running container of an enabled connector is a row of `devices` of kind
 * `container`, so it is pending or accepted, counts against the device limit and carries tags like any device.
 *
 * - A container that starts is online; one new to the namespace is pending (within `limits.pendingDevices`, as
 *   for agents), and one removed earlier comes back pending, as an agent that registers again does.
 * - A container that stops is no longer a device unless it was accepted: a pending one goes, an accepted one
 *   stays accepted and offline, so it needs no new acceptance when it starts again.
 * - A container the engine deletes goes; an accepted one becomes removed and keeps its slot for the removal
 *   window.
 * - A container belongs to one connector, and so to one namespace: when two connectors serve the same engine, the
 *   older connector keeps its containers, and the newer one is told so (it lists none of them).
 */
export class ContainerDevices {
  private readonly db: Knex;
  private readonly config: Config;
  private readonly log: Logger;

  constructor(deps: { db: Knex; config: Config; log: Logger }) {
    this.db = deps.db;
    this.config = deps.config;
    this.log = deps.log.child({ part: 'connectors' });
  }

  /**
   * These containers run now; every other container of the connector has stopped. `taken` when one of them is
   * another, older connector's: this connector then serves an engine that is not its namespace's alone.
   */
  async sync(connector: WatchedConnector, running: EngineContainer[], engine: EngineFacts): Promise<Claim> {
    for (const c of running) {
      if ((await this.running(connector, c, engine)) === 'taken') return 'taken';
    }
    const ids = running.map((c) => c.id);
    const stale = (await this.db('connector_containers')
      .where({ connector_uid: connector.uid })
      .whereNot((q) => q.whereIn('container_id', ids))
      .pluck('container_id')) as string[];
    await this.stopped(connector.uid, stale);
    return 'listed';
  }

  /**
   * The container runs: its device is online, made pending when the namespace does not know it. Nothing is
   * written unless the connector is still enabled in the same statement, so a watcher that has not yet heard of
   * a disable cannot bring containers back. A container another connector lists stays that connector's when that
   * one is older (`taken`); when this one is older, it takes the container over and the other's device goes.
   */
  async running(connector: WatchedConnector, c: EngineContainer, engine: EngineFacts): Promise<Claim> {
    const uid = containerDeviceUid(connector.tenant_id, c.id);
    const values = {
      uid,
      tenant: connector.tenant_id,
      connector: connector.uid,
      containerId: c.id,
      name: defaultDeviceName(c.name, c.id.slice(0, 12)),
      // A container has no stable MAC of its own (engines reuse them): its identity is its container id.
      identity: JSON.stringify({ mac: c.id }),
      info: JSON.stringify({
        id: 'container',
        pretty_name: c.image.slice(0, 255),
        version: engine.version.slice(0, 64),
        arch: engine.arch.slice(0, 32),
        platform: 'docker',
      }),
      hostname: c.name.slice(0, 255),
      address: connector.remoteAddr.slice(0, 64),
    };
    return this.db.transaction(async (trx): Promise<Claim> => {
      const enabled = await trx('connectors')
        .where({ uid: connector.uid, enable: true })
        .forShare()
        .first('uid');
      if (!enabled) return 'skipped';
      // One claim of a container at a time, across every connector and namespace.
      await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [`connectors:container:${c.id}`]);
      const holder = (await trx('connector_containers as cc')
        .join('connectors as c', 'c.uid', 'cc.connector_uid')
        .where('cc.container_id', c.id)
        .whereNot('cc.connector_uid', connector.uid)
        .first('cc.connector_uid', 'cc.device_uid', 'c.created_at')) as
        | { connector_uid: string; device_uid: string; created_at: Date }
        | undefined;
      if (holder) {
        const theirs = new Date(holder.created_at).getTime();
        const ours = new Date(connector.created_at).getTime();
        if (theirs < ours || (theirs === ours && holder.connector_uid < connector.uid)) return 'taken';
        // Within one namespace the device is the same: only the connector it came through changes.
        if (holder.device_uid !== uid) await this.release(trx, holder.device_uid);
      }
      const known = await trx.raw<{ rows: { uid: string }[] }>(
        `update devices set
           info = :info, remote_addr = :address, connected = true, last_seen = now(),
           status = case when status = 'removed' then 'pending' else status end,
           status_update_at = case when status = 'removed' then now() else status_update_at end
         where uid = :uid and tenant_id = :tenant and kind = 'container'
         returning uid`,
        values,
      );
      if (!known.rows[0]) {
        // The same bound as agents' registrations, under the same lock (plugins/community/devices/service.ts).
        await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [
          `devices:pending:${connector.tenant_id}`,
        ]);
        const [count] = (await trx('devices')
          .where({ tenant_id: connector.tenant_id, status: 'pending' })
          .count({ n: '*' })) as { n: string | number }[];
        if (Number(count?.n ?? 0) >= this.config.limits.pendingDevices) {
          this.log.warn(
            { connector: connector.uid, container: c.id },
            'container not listed: the namespace already keeps the most pending devices it may',
          );
          return 'skipped';
        }
        const inserted = await trx.raw<{ rows: { uid: string }[] }>(
          `insert into devices
             (uid, tenant_id, name, identity, info, kind, public_key, hostname, remote_addr, connected, last_seen)
           values (:uid, :tenant, :name, :identity, :info, 'container', '', :hostname, :address, true, now())
           on conflict (uid) do nothing
           returning uid`,
          values,
        );
        if (!inserted.rows[0]) return 'skipped';
      }
      await trx.raw(
        `insert into connector_containers (device_uid, connector_uid, container_id, running)
         values (:uid, :connector, :containerId, true)
         on conflict (device_uid) do update set connector_uid = excluded.connector_uid, running = true`,
        values,
      );
      return 'listed';
    });
  }

  /** Another connector's claim on a container ends: its device goes as a deleted container's does. */
  private async release(trx: Knex.Transaction, deviceUid: string): Promise<void> {
    await trx('devices').where({ uid: deviceUid, status: 'accepted' }).update({
      status: 'removed',
      status_update_at: trx.fn.now(),
      removed_at: trx.fn.now(),
      connected: false,
    });
    await trx('devices').where({ uid: deviceUid }).whereNot('status', 'removed').delete();
    await trx('connector_containers').where({ device_uid: deviceUid }).delete();
  }

  /** The containers stopped (or the engine is out of reach): pending ones go, accepted ones go offline. */
  async stopped(connectorUid: string, containerIds: string[]): Promise<void> {
    if (containerIds.length === 0) return;
    await this.db.transaction(async (trx) => {
      const mapped = () =>
        trx('connector_containers')
          .where({ connector_uid: connectorUid })
          .whereIn('container_id', containerIds);
      await trx('devices')
        .whereIn('uid', mapped().select('device_uid'))
        .whereNotIn('status', ['accepted', 'removed'])
        .delete();
      await trx('devices').whereIn('uid', mapped().select('device_uid')).update({ connected: false });
      await mapped().update({ running: false });
    });
  }

  /** The engine deleted the containers: accepted ones become removed (keeping their slot), the rest go. */
  async gone(connectorUid: string, containerIds: string[]): Promise<void> {
    if (containerIds.length === 0) return;
    await this.db.transaction(async (trx) => {
      const mapped = () =>
        trx('connector_containers')
          .where({ connector_uid: connectorUid })
          .whereIn('container_id', containerIds);
      await trx('devices').whereIn('uid', mapped().select('device_uid')).where('status', 'accepted').update({
        status: 'removed',
        status_update_at: trx.fn.now(),
        removed_at: trx.fn.now(),
        connected: false,
      });
      await trx('devices')
        .whereIn('uid', mapped().select('device_uid'))
        .whereNot('status', 'removed')
        .delete();
      await mapped().delete();
    });
  }

  /** Every container of the connector stops being a running device (the connector is off or out of reach). */
  async detach(connectorUid: string): Promise<void> {
    const ids = (await this.db('connector_containers')
      .where({ connector_uid: connectorUid })
      .pluck('container_id')) as string[];
    await this.stopped(connectorUid, ids);
  }

  /** The connector's running containers are still there: their devices stay online (devices' 120 s window). */
  async alive(connectorUid: string): Promise<void> {
    await this.db('devices')
      .whereIn(
        'uid',
        this.db('connector_containers')
          .where({ connector_uid: connectorUid, running: true })
          .select('device_uid'),
      )
      .update({ connected: true, last_seen: this.db.fn.now() });
  }

  /** The engine and container behind a container device, or undefined when it is not a connector's container. */
  async locate(
    deviceUid: string,
  ): Promise<{ connectorUid: string; containerId: string; running: boolean } | undefined> {
    const row = (await this.db('connector_containers')
      .join('connectors', 'connectors.uid', 'connector_containers.connector_uid')
      .where('connector_containers.device_uid', deviceUid)
      .where('connectors.enable', true)
      .first(
        'connector_containers.connector_uid',
        'connector_containers.container_id',
        'connector_containers.running',
      )) as { connector_uid: string; container_id: string; running: boolean } | undefined;
    return row
      ? { connectorUid: row.connector_uid, containerId: row.container_id, running: row.running }
      : undefined;
  }
}
