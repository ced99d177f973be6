import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Cache, Logger, SecretBox } from '@gatehouse/core';
import type { TunnelHub } from '@gatehouse/plugin-community';
import type Docker from 'dockerode';
import type { Knex } from 'knex';
import type { ContainerDevices, EngineContainer, EngineFacts, WatchedConnector } from './containers';
import {
  connectedTo,
  ENGINE_TIMEOUT_MS,
  engineClient,
  engineError,
  engineVersion,
  probeEngine,
  STATUS,
} from './engine';
import { Connector } from './model';
import type { EngineStatus } from './schemas';
import { type ConnectorChanges, connectorLink } from './service';

/** How often each instance looks for connectors to watch, and renews the leases of those it watches. */
const RECONCILE_MS = 10_000;
/** A lease outlives a few missed renewals, then another instance takes the connector over. */
const LEASE_SECONDS = 30;
/** How often a watcher tells the store its running containers are still there (devices' window is 120 s). */
const ALIVE_MS = 30_000;
const BACKOFF_MIN_MS = 1_000;
const BACKOFF_MAX_MS = 60_000;

const leaseKey = (uid: string) => `connectors:watch:${uid}`;

/** A watcher stops following an engine that another, older connector serves. */
class EngineTaken extends Error {
  override name = 'EngineTaken';
}

/**
 * Keeps the container devices of every enabled connector current from its engine's event stream. A connector is
 * watched on the instance that holds its connector process's tunnel (one watcher in the whole installation: the
 * lease in the shared cache settles the moment two tunnels of one connector overlap). A watcher lists the running
 * containers when it connects, then follows start, die and destroy events; when the stream ends or the engine is
 * out of reach its containers go offline and it tries again with jittered exponential backoff (1 s to 60 s),
 * keeping the reason as the connector's status. When its tunnel goes, so does the watcher.
 */
export class ConnectorWatchers implements ConnectorChanges {
  private readonly db: Knex;
  private readonly cache: Cache;
  private readonly log: Logger;
  private readonly devices: ContainerDevices;
  private readonly secrets: SecretBox;
  private readonly tunnels: () => TunnelHub;
  private readonly instance = randomUUID();
  private readonly watches = new Map<string, ConnectorWatch>();
  /** Connectors whose tunnel is on this instance, with the address it came from. */
  private readonly local = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private reconciling: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(deps: {
    db: Knex;
    cache: Cache;
    log: Logger;
    containerDevices: ContainerDevices;
    secrets: SecretBox;
    /** The connectors' tunnel hub (it reports tunnels here, so it is looked up when needed, not at construction). */
    connectorTunnels: TunnelHub;
  }) {
    this.db = deps.db;
    this.cache = deps.cache;
    this.log = deps.log.child({ part: 'connectors' });
    this.devices = deps.containerDevices;
    this.secrets = deps.secrets;
    this.tunnels = () => deps.connectorTunnels;
  }

  /** Connectors of every namespace: the watchers serve the whole installation. */
  private connectors() {
    return Connector.acrossTenants(this.db);
  }

  /** Keeps what the last attempt said (a watcher reports here as it connects and loses it). */
  async setStatus(uid: string, status: EngineStatus): Promise<void> {
    await this.connectors()
      .where({ uid })
      .whereRaw('(status_state, status_message) is distinct from (?, ?)', [status.State, status.Message])
      .patch({ status_state: status.State, status_message: status.Message });
  }

  async start(): Promise<void> {
    await this.reconcile();
    this.timer = setInterval(() => {
      void this.reconcile();
    }, RECONCILE_MS);
    this.timer.unref();
  }

  /**
   * A connector's process connected to this instance. Its engine is asked who it is at once, enabled or not, so
   * the status says whether the engine answers; an enabled connector is then watched.
   */
  async online(uid: string, remoteAddr: string): Promise<void> {
    this.local.set(uid, remoteAddr);
    const row = await this.connectors().findById(uid);
    if (row && !row.enable) {
      await this.setStatus(
        uid,
        await probeEngine(engineClient(connectorLink(row, this.secrets, this.tunnels()))),
      );
    }
    await this.reconcile();
  }

  /** Connectors' processes went away from this instance: their containers go offline with them. */
  async offline(uids: string[]): Promise<void> {
    for (const uid of uids) {
      this.local.delete(uid);
      const watch = this.watches.get(uid);
      if (watch) {
        this.watches.delete(uid);
        await watch.stop();
        await this.cache.del(leaseKey(uid)).catch(() => undefined);
      }
      await this.devices.detach(uid);
      await this.setStatus(uid, { State: 'disconnected', Message: STATUS.offline });
    }
  }

  /** A connector was made, changed or deleted here: watch, restart or drop it now rather than at the next round. */
  async changed(uid: string): Promise<void> {
    const watch = this.watches.get(uid);
    if (watch) {
      this.watches.delete(uid);
      await watch.stop();
      await this.cache.del(leaseKey(uid));
    }
    const row = await this.connectors().findById(uid);
    if (!row?.enable) {
      if (row) await this.devices.detach(uid);
      return;
    }
    await this.reconcile();
  }

  /** One round: take the leases of enabled connectors nobody watches, renew ours, drop what is gone or not ours. */
  reconcile(): Promise<void> {
    this.reconciling = this.reconciling.then(() =>
      this.round().catch((err: unknown) => this.log.error({ err }, 'connector watchers round failed')),
    );
    return this.reconciling;
  }

  private async round(): Promise<void> {
    if (this.stopped) return;
    const rows = this.local.size
      ? await this.connectors()
          .where({ enable: true })
          .whereIn('uid', [...this.local.keys()])
      : [];
    const enabled = new Map(rows.map((r) => [r.uid, r]));
    for (const [uid, watch] of this.watches) {
      const row = enabled.get(uid);
      const ours = row && (await this.cache.get(leaseKey(uid))) === this.instance;
      if (row && ours && !watch.outdated(row)) {
        await this.cache.set(leaseKey(uid), this.instance, LEASE_SECONDS);
        continue;
      }
      this.watches.delete(uid);
      await watch.stop();
      if (ours) await this.cache.del(leaseKey(uid));
    }
    for (const row of rows) {
      if (this.stopped || this.watches.has(row.uid)) continue;
      if (!(await this.cache.setIfAbsent(leaseKey(row.uid), this.instance, LEASE_SECONDS))) continue;
      const link = connectorLink(row, this.secrets, this.tunnels());
      const watch = new ConnectorWatch(row, this.local.get(row.uid) ?? '', {
        docker: engineClient(link),
        events: engineClient(link, { bounded: false }),
        devices: this.devices,
        status: (status) => this.setStatus(row.uid, status),
        log: this.log.child({ connector: row.uid }),
      });
      this.watches.set(row.uid, watch);
      watch.start();
    }
  }

  /** Whether this instance watches the connector's engine now. */
  watching(uid: string): boolean {
    return this.watches.has(uid);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.reconciling;
    const watches = [...this.watches.entries()];
    this.watches.clear();
    await Promise.all(
      watches.map(async ([uid, watch]) => {
        await watch.stop();
        await this.cache.del(leaseKey(uid)).catch(() => undefined);
      }),
    );
  }
}

/** One connector's watcher: connect, list, follow events, and again after a pause when the stream ends. */
class ConnectorWatch {
  private readonly docker: Docker;
  private readonly connector: WatchedConnector;
  private events: Readable | undefined;
  private stopping = false;
  private wake: (() => void) | undefined;
  private done: Promise<void> = Promise.resolve();
  private aliveTimer: NodeJS.Timeout | undefined;
  /** An event showed a container of another, older connector. */
  private taken = false;

  constructor(
    private readonly row: Connector,
    remoteAddr: string,
    private readonly deps: {
      /** Calls answered whole (bounded). */
      docker: Docker;
      /** The event stream, which never ends. */
      events: Docker;
      devices: ContainerDevices;
      status: (status: EngineStatus) => Promise<void>;
      log: Logger;
    },
  ) {
    this.docker = deps.docker;
    this.connector = {
      uid: row.uid,
      tenant_id: row.tenant_id,
      created_at: new Date(row.created_at),
      remoteAddr,
    };
  }

  /** Whether the connector's row changed in a way that needs a new connection. */
  outdated(row: Connector): boolean {
    return row.secure !== this.row.secure || row.tls !== this.row.tls;
  }

  start(): void {
    this.done = this.loop().catch((err: unknown) => this.deps.log.error({ err }, 'connector watcher ended'));
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.events?.destroy();
    this.wake?.();
    await this.done;
  }

  private async loop(): Promise<void> {
    let backoff = BACKOFF_MIN_MS;
    while (!this.stopping) {
      const since = Date.now();
      this.taken = false;
      try {
        await this.follow();
      } catch (err) {
        if (this.stopping) break;
        const reason = err instanceof EngineTaken ? STATUS.taken : engineError(err);
        this.deps.log.warn({ reason }, 'connector engine out of reach');
        await this.deps
          .status({ State: 'disconnected', Message: reason })
          .catch((e: unknown) => this.deps.log.error({ err: e }, 'connector status not kept'));
      } finally {
        if (this.aliveTimer) clearInterval(this.aliveTimer);
      }
      if (this.stopping) break;
      // Out of reach, its containers cannot be reached either.
      await this.deps.devices.detach(this.row.uid).catch((err: unknown) => this.deps.log.error({ err }));
      // A stream that stayed up a while starts the backoff afresh.
      if (Date.now() - since > BACKOFF_MAX_MS) backoff = BACKOFF_MIN_MS;
      await this.pause(backoff / 2 + Math.random() * (backoff / 2));
      backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      timer.unref();
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** Connects, lists and follows events until the stream ends (resolves) or fails (rejects). */
  private async follow(): Promise<void> {
    // Subscribed before listing: a container that starts in between is in the list or in the events.
    const events = (await this.deps.events.getEvents({
      filters: { type: ['container'] },
    })) as unknown as Readable;
    this.events = events;
    const ended = new Promise<void>((resolve, reject) => {
      events.once('error', reject);
      events.once('end', resolve);
      events.once('close', resolve);
    });
    // Rejections are awaited below; until then one must not count as unhandled.
    ended.catch(() => undefined);
    if (this.stopping) events.destroy();

    let engine: EngineFacts | undefined;
    const early: string[] = [];
    // Events are handled one after the other: a start and its die must land in that order.
    let chain: Promise<void> = Promise.resolve();
    const handle = (line: string, facts: EngineFacts) => {
      chain = chain
        .then(() => this.event(line, facts))
        .catch((err: unknown) => this.deps.log.error({ err }, 'container event not applied'));
    };
    let buffered = '';
    events.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      let nl = buffered.indexOf('\n');
      while (nl !== -1) {
        const line = buffered.slice(0, nl).trim();
        buffered = buffered.slice(nl + 1);
        nl = buffered.indexOf('\n');
        if (!line) continue;
        if (engine) handle(line, engine);
        else early.push(line);
      }
      // An engine that sends an endless line is not an engine to follow.
      if (buffered.length > 1024 * 1024) events.destroy(new Error('an event longer than 1 MiB'));
    });

    if (!this.stopping) {
      const version = await engineVersion(this.docker);
      const facts: EngineFacts = { arch: version.arch, version: version.version };
      // Connected from the moment the engine answers: a container the sync below lists is never shown beside the
      // status of the connection that failed before.
      if (!this.stopping) await this.deps.status(connectedTo(version));
      const listed = await this.docker.listContainers({
        abortSignal: AbortSignal.timeout(ENGINE_TIMEOUT_MS),
      });
      if (!this.stopping) {
        if ((await this.deps.devices.sync(this.connector, listed.map(toContainer), facts)) === 'taken') {
          events.destroy();
          throw new EngineTaken();
        }
        this.deps.log.info({ containers: listed.length }, 'connector watching its engine');
        this.aliveTimer = setInterval(() => {
          this.deps.devices.alive(this.row.uid).catch((err: unknown) => this.deps.log.error({ err }));
        }, ALIVE_MS);
        this.aliveTimer.unref();
      }
      engine = facts;
      for (const line of early.splice(0)) handle(line, facts);
    }
    await ended.catch((err: unknown) => {
      if (!this.taken) throw err;
    });
    await chain;
    if (this.taken) throw new EngineTaken();
    if (!this.stopping) throw new Error('the engine closed its event stream');
  }

  private async event(line: string, engine: EngineFacts): Promise<void> {
    let event: { Type?: string; Action?: string; id?: string; Actor?: { ID?: string } };
    try {
      event = JSON.parse(line);
    } catch {
      return;
    }
    const id = event.Actor?.ID ?? event.id;
    if (event.Type !== 'container' || typeof id !== 'string' || !/^[0-9a-f]{12,128}$/.test(id)) return;
    switch (event.Action) {
      case 'start':
      case 'unpause': {
        const [found] = await this.docker.listContainers({
          filters: { id: [id] },
          abortSignal: AbortSignal.timeout(ENGINE_TIMEOUT_MS),
        });
        if (
          found &&
          (await this.deps.devices.running(this.connector, toContainer(found), engine)) === 'taken'
        ) {
          // Another, older connector serves this engine: this one stops following it.
          this.taken = true;
          this.events?.destroy();
        }
        return;
      }
      case 'die':
      case 'stop':
      case 'kill':
        // `kill` may not end the container; the list says whether it still runs.
        if (event.Action === 'kill') {
          const [still] = await this.docker.listContainers({
            filters: { id: [id] },
            abortSignal: AbortSignal.timeout(ENGINE_TIMEOUT_MS),
          });
          if (still) return;
        }
        return this.deps.devices.stopped(this.row.uid, [id]);
      case 'destroy':
      case 'remove':
        return this.deps.devices.gone(this.row.uid, [id]);
      default:
        return;
    }
  }
}

function toContainer(c: Docker.ContainerInfo): EngineContainer {
  return { id: c.Id, name: (c.Names?.[0] ?? c.Id.slice(0, 12)).replace(/^\//, ''), image: c.Image ?? '' };
}
