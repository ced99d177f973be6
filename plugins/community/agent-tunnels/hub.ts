import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Cache, Logger, TokenService, UpgradeHandler } from '@gatehouse/core';
import {
  acceptTunnel,
  parseStreamHeader,
  type StreamHeader,
  TUNNEL_MAX_MESSAGE,
  type Tunnel,
} from '@gatehouse/protocol/mux';
import { createWebSocketStream, WebSocket, WebSocketServer } from 'ws';

/**
 * Who may hold a tunnel of one kind, and what the hub tells about them. The hub is the same for every kind of peer
 * (device agents, connectors beside container engines); a kind brings its upgrade path, its admission and its
 * presence writes.
 */
export interface TunnelPeers {
  /** What a peer is called in logs, lease keys and the forwarding request (`device`, `connector`). */
  name: string;
  /** The public upgrade path peers dial, e.g. `/agent/connection`. */
  path: string;
  /** The internal listener's path where another instance asks for a stream to a peer whose tunnel is here. */
  forwardPath: string;
  /** Decides an upgrade request: the peer it is, or the refusal to answer. Runs before the WebSocket handshake. */
  admit(req: IncomingMessage): Promise<PeerAdmission>;
  /** A peer's tunnel came up here; runs before the `offline` of the same tunnel. */
  online(id: string, remoteAddr: string): Promise<void>;
  /** Tunnels went down (a close, or every tunnel of this instance at stop). */
  offline(ids: string[]): Promise<void>;
  /** Peers whose tunnels answered a ping this round. */
  alive(ids: string[]): Promise<void>;
}

/** The answer of `TunnelPeers.admit`. */
export type PeerAdmission =
  | {
      ok: true;
      id: string;
      /** The stream kinds the peer serves beyond its basic ones (known kinds only: they are kept in the lease). */
      kinds: string[];
    }
  | { ok: false; status: 400 | 401 | 403 | 404 | 503; body: Record<string, string> };

/** `open` on a peer without a live tunnel on any instance. */
export class DeviceOffline extends Error {
  override name = 'DeviceOffline';
  constructor(readonly uid: string) {
    super(`device ${uid} is offline: its agent has no tunnel to this server`);
  }
}

export interface TunnelHubOptions {
  /** Seconds between pings of every tunnel. */
  pingIntervalSeconds?: number;
  /** How long a stream open or a ping waits for the peer. */
  timeoutMs?: number;
}

interface LiveTunnel {
  session: Tunnel;
  ws: WebSocket;
  remoteAddr: string;
  /** Which second of the ping interval this tunnel is pinged in. */
  slot: number;
  /** The stream kinds its peer serves beyond the basic ones. */
  kinds: string[];
}

interface Lease {
  instance: string;
  address: string;
  /** LiveTunnel.kinds, so another instance knows what to open before it forwards. */
  kinds?: string[];
}

/** What scale-out needs: the cache all instances share, and how the others reach this one. */
export interface TunnelHubDeps {
  /** Signs and checks the short-lived instance tokens of forwarded streams. */
  tokens: TokenService;
  log: Logger;
  /** Shared by the instances (Redis); without it (or with the in-process cache) nothing is forwarded. */
  cache?: Cache;
  /** This instance, for the internal address its leases name. */
  instance?: { internalAddress: string };
}

/**
 * The registry of live tunnels of one kind of peer on this server (device agents dial `/agent/connection`,
 * connectors `/connector/connection`). The hub admits what its peers' `admit` lets in, keeps one tunnel per peer (a
 * newer one replaces the older), pings them all on one timer, and opens streams to them for the SSH gateway, the
 * HTTP tunnel proxy and the connectors' engine calls.
 *
 * With several instances each tunnel has a lease in the shared cache naming this instance's internal address. A
 * stream asked for a peer whose tunnel is on another instance is opened there, over a WebSocket to that instance's
 * internal listener, authenticated with a short-lived instance token (docs: Developers, "Architecture").
 */
export class TunnelHub {
  private readonly tokens: TokenService;
  private readonly log: Logger;
  private readonly peers: TunnelPeers;
  private readonly cache: Cache | undefined;
  private readonly address: () => string | undefined;
  /** This process, as leases name it. */
  readonly instanceId = randomBytes(8).toString('hex');
  private readonly leaseSeconds: number;
  private unsubscribe: (() => Promise<void>) | undefined;
  private readonly tunnels = new Map<string, LiveTunnel>();
  private readonly writes = new Map<string, Promise<void>>();
  private readonly wss = new WebSocketServer({
    noServer: true,
    maxPayload: TUNNEL_MAX_MESSAGE,
    perMessageDeflate: false,
    clientTracking: false,
  });
  private readonly forwardWss = new WebSocketServer({
    noServer: true,
    maxPayload: TUNNEL_MAX_MESSAGE,
    perMessageDeflate: false,
    clientTracking: true,
  });
  private readonly timeoutMs: number;
  private readonly pingTimer: NodeJS.Timeout;
  private readonly slots: number;
  private tick = 0;
  private nextSlot = 0;
  private stopped = false;

  constructor(deps: TunnelHubDeps, peers: TunnelPeers, options: TunnelHubOptions = {}) {
    this.tokens = deps.tokens;
    this.peers = peers;
    this.log = deps.log.child({ part: peers.name === 'device' ? 'tunnels' : `${peers.name}-tunnels` });
    this.cache = deps.cache;
    this.address = () => deps.instance?.internalAddress;
    this.timeoutMs = options.timeoutMs ?? 15_000;
    // Each tunnel is pinged once per interval, in its own second of it: thousands of pings (and their one
    // last_seen write) at the same instant would stall the auth calls that arrive meanwhile.
    this.slots = Math.max(1, Math.round(options.pingIntervalSeconds ?? 30));
    // Three missed renewals and the lease lapses: a crashed instance's devices stop being forwarded to it.
    this.leaseSeconds = this.slots * 3;
    this.pingTimer = setInterval(
      () =>
        this.pingSlot(this.tick++ % this.slots).catch((err: unknown) =>
          this.log.error({ err }, 'tunnel ping round failed'),
        ),
      1000,
    );
    this.pingTimer.unref();
  }

  /**
   * The lease key of a peer's tunnel. Devices keep the key they always had, so that during a rolling upgrade the
   * instances of the version before still find each other's tunnels.
   */
  private leaseKey(id: string): string {
    return this.peers.name === 'device' ? `tunnels:${id}` : `tunnels:${this.peers.name}:${id}`;
  }

  /** Where a disconnect asked on one instance reaches the instance holding the tunnel. */
  private get disconnectChannel(): string {
    return this.peers.name === 'device' ? 'tunnels:disconnect' : `tunnels:${this.peers.name}:disconnect`;
  }

  /** Number of live tunnels on this server. */
  get size(): number {
    return this.tunnels.size;
  }

  /** Whether an instance of the installation holds a tunnel of the device: this one, or one with a lease. */
  async reachable(uid: string): Promise<boolean> {
    return this.isOnline(uid) || (await this.leaseElsewhere(uid)) !== undefined;
  }

  /** The lease of another instance on the device's tunnel, if one stands. */
  private async leaseElsewhere(uid: string): Promise<Lease | undefined> {
    const raw = this.cache ? await this.cache.get(this.leaseKey(uid)) : null;
    const lease = raw ? (JSON.parse(raw) as Lease) : undefined;
    return lease && lease.instance !== this.instanceId ? lease : undefined;
  }

  /**
   * The stream kinds the device's agent serves beyond `ssh` and `tcp`, wherever its tunnel is; empty for an
   * agent before the session protocol, or a device no instance holds.
   */
  async streamKinds(uid: string): Promise<readonly string[]> {
    const t = this.tunnels.get(uid);
    if (t && !t.session.closed) return t.kinds;
    return (await this.leaseElsewhere(uid))?.kinds ?? [];
  }

  /** Whether this instance holds a live tunnel of the device. */
  isOnline(uid: string): boolean {
    const t = this.tunnels.get(uid);
    return t !== undefined && !t.session.closed;
  }

  /**
   * Opens a stream to the device's agent, through the instance holding its tunnel when that is another one;
   * throws DeviceOffline when no instance holds one.
   */
  async open(uid: string, header: StreamHeader): Promise<Duplex> {
    const t = this.tunnels.get(uid);
    if (t && !t.session.closed) return this.openLocal(t, uid, header);
    return this.openElsewhere(uid, header);
  }

  private async openLocal(t: LiveTunnel, uid: string, header: StreamHeader): Promise<Duplex> {
    const stream = await t.session.open(header);
    // A tunnel that drops destroys its streams with an error. The caller may not be listening for errors at that
    // moment (between its await and its wiring, or a piece that only watches 'close'), and an unheard 'error' is
    // thrown out of the event loop and ends the whole server. Callers that listen still get 'error' and 'close'.
    stream.on('error', (err: Error) =>
      this.log.debug({ uid, err: err.message }, 'tunnel stream ended by error'),
    );
    return stream;
  }

  private async openElsewhere(uid: string, header: StreamHeader): Promise<Duplex> {
    const lease = await this.leaseElsewhere(uid);
    if (!lease) throw new DeviceOffline(uid);
    const token = await this.tokens.sign({ kind: 'instance', sub: this.instanceId }, 60);
    const url = new URL(this.peers.forwardPath, lease.address.replace(/^http/, 'ws'));
    url.searchParams.set(this.peers.name, uid);
    const ws = new WebSocket(url, {
      headers: { authorization: `Bearer ${token}`, 'x-gatehouse-stream': JSON.stringify(header) },
      perMessageDeflate: false,
      maxPayload: TUNNEL_MAX_MESSAGE,
      handshakeTimeout: this.timeoutMs,
      // Instance to instance on the internal listener: no intermediary reads these frames, and masking every byte
      // in JavaScript (and unmasking it there) halved what a forwarded connection moved.
      generateMask: (mask: Buffer) => {
        mask.fill(0);
      },
    });
    // The stream wraps the socket before it opens: the agent speaks first, and its first bytes may come in the
    // same read as the upgrade answer, before a listener bound after 'open' would hear them.
    const stream = createWebSocketStream(ws, { allowHalfOpen: false });
    stream.on('error', (err: Error) =>
      this.log.debug({ uid, err: err.message }, 'forwarded stream ended by error'),
    );
    try {
      await once(ws, 'open');
    } catch (err) {
      // The other instance is gone, or its tunnel went while the lease stood: offline, as far as a user can tell.
      this.log.info({ uid, instance: lease.instance, err: (err as Error).message }, 'forwarding refused');
      stream.destroy();
      throw new DeviceOffline(uid);
    }
    return stream;
  }

  /** The internal upgrade another instance makes for a stream to an agent whose tunnel is here. */
  readonly forwardUpgrade: UpgradeHandler = async (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://internal');
    if (url.pathname !== this.peers.forwardPath) return false;
    const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    try {
      if (!bearer) throw new Error('no token');
      await this.tokens.verify(bearer, 'instance');
    } catch {
      refuse(socket, 401, { message: 'missing or malformed instance token' });
      return true;
    }
    if ((req.headers.upgrade ?? '').toLowerCase() !== 'websocket') {
      // Refused before a stream to the agent is opened: ws would end the socket without a word about it.
      refuse(socket, 400, { message: 'a forwarded stream is a WebSocket upgrade' });
      return true;
    }
    const uid = url.searchParams.get(this.peers.name) ?? '';
    const headerText = req.headers['x-gatehouse-stream'];
    const header = typeof headerText === 'string' ? parseStreamHeader(Buffer.from(headerText)) : undefined;
    const t = this.tunnels.get(uid);
    if (!header || !t || t.session.closed || this.stopped) {
      refuse(socket, 404, { message: `no tunnel for this ${this.peers.name} here` });
      return true;
    }
    let stream: Duplex;
    try {
      stream = await this.openLocal(t, uid, header);
    } catch (err) {
      refuse(socket, 503, { message: (err as Error).message.slice(0, 200) });
      return true;
    }
    // The stream to the agent lives as long as the asking instance's socket, the WebSocket's once upgraded. That
    // also covers an instance that gave up while the agent opened the stream, and a handshake ws refuses (a bad key
    // or version) without calling back.
    if (socket.destroyed) {
      stream.destroy();
      return true;
    }
    socket.once('close', () => stream.destroy());
    this.forwardWss.handleUpgrade(req, socket, head, (ws) => {
      const carried = createWebSocketStream(ws, { allowHalfOpen: false });
      carried.on('error', () => stream.destroy());
      stream.on('error', () => carried.destroy());
      stream.on('close', () => carried.destroy());
      stream.pipe(carried).pipe(stream);
    });
    return true;
  };

  /**
   * Drops the device's tunnel (rejected, removed, or marked offline by the internal call), on whichever instance
   * holds it.
   */
  disconnect(uid: string): void {
    const t = this.tunnels.get(uid);
    if (t) {
      t.session.close();
      return;
    }
    this.cache
      ?.publish(this.disconnectChannel, uid)
      .catch((err: unknown) =>
        this.log.warn({ err, uid }, 'could not ask the other instances to disconnect'),
      );
  }

  /** Starts hearing the other instances' disconnect requests (at boot). */
  async listen(): Promise<void> {
    if (!this.cache || this.unsubscribe) return;
    this.unsubscribe = await this.cache.subscribe(this.disconnectChannel, (uid) => {
      this.tunnels.get(uid)?.session.close();
    });
  }

  /** The upgrade handler of the peers' path (RegisterContext.upgrade). */
  readonly upgrade: UpgradeHandler = async (req, socket, head) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== this.peers.path) return false;
    if (this.stopped) {
      refuse(socket, 503, { message: 'server is shutting down' });
      return true;
    }
    const admission = await this.peers.admit(req);
    if (!admission.ok) {
      refuse(socket, admission.status, admission.body);
      return true;
    }
    const { id, kinds } = admission;
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      this.attach(id, ws, remoteAddress(req), kinds).catch((err: unknown) => {
        // One peer's failed tunnel closes that tunnel only.
        this.log.warn({ err, id }, 'tunnel could not be attached');
        ws.terminate();
      });
    });
    return true;
  };

  private async attach(uid: string, ws: WebSocket, remoteAddr: string, kinds: string[]): Promise<void> {
    // acceptTunnel binds its listeners before it returns, in the tick handleUpgrade hands the socket over: frames
    // the agent sends right after the upgrade are not lost.
    const session = await acceptTunnel(ws, { timeoutMs: this.timeoutMs });
    // A tunnel that is already closed must neither replace a live one nor sit in the registry as online.
    if (this.stopped || session.closed) {
      session.close();
      return;
    }
    const live: LiveTunnel = { session, ws, remoteAddr, slot: this.nextSlot++ % this.slots, kinds };
    const previous = this.tunnels.get(uid);
    this.tunnels.set(uid, live);
    // A newer tunnel replaces the older: an agent that reconnected before the server noticed the old one die.
    if (previous) previous.session.close();
    session.on('protocolError', (err: Error) =>
      this.log.warn({ uid, err: err.message }, 'tunnel closed: protocol error'),
    );
    session.once('close', () => {
      if (this.tunnels.get(uid) !== live) return;
      this.tunnels.delete(uid);
      void this.dropLease(uid);
      if (!this.stopped) this.serial(uid, () => this.peers.offline([uid]));
    });
    if (!session.closed) {
      void this.renewLeases([uid]);
      this.serial(uid, () => this.peers.online(uid, remoteAddr));
    }
    this.log.debug({ uid, remoteAddr, replaced: previous !== undefined }, 'tunnel up');
  }

  /** Settles once the presence writes queued so far for this device (its online, its offline) are done. */
  async presenceWritten(uid: string): Promise<void> {
    await this.writes.get(uid);
  }

  /** Presence writes of one device run in order, so an early close cannot be overtaken by its own online. */
  private serial(uid: string, write: () => Promise<void>): void {
    const next = (this.writes.get(uid) ?? Promise.resolve())
      .then(write)
      .catch((err: unknown) => this.log.error({ err, uid }, 'tunnel presence write failed'));
    this.writes.set(uid, next);
    void next.finally(() => {
      if (this.writes.get(uid) === next) this.writes.delete(uid);
    });
  }

  private async pingSlot(slot: number): Promise<void> {
    const alive: string[] = [];
    const due = [...this.tunnels].filter(([, t]) => t.slot === slot);
    await Promise.all(
      due.map(async ([uid, t]) => {
        try {
          await t.session.ping();
          alive.push(uid);
        } catch {
          this.log.info({ uid }, 'tunnel closed: agent stopped answering pings');
          t.session.close();
        }
      }),
    );
    if (alive.length > 0 && !this.stopped) {
      await this.renewLeases(alive);
      await this.peers.alive(alive).catch((err: unknown) => this.log.error({ err }, 'ping write failed'));
    }
  }

  /** Says in the shared cache that these devices' tunnels are here. */
  private async renewLeases(uids: string[]): Promise<void> {
    const address = this.address();
    if (!this.cache || !address) return;
    const lease = (uid: string) => {
      const kinds = this.tunnels.get(uid)?.kinds ?? [];
      return JSON.stringify({
        instance: this.instanceId,
        address,
        ...(kinds.length ? { kinds } : {}),
      } satisfies Lease);
    };
    await Promise.all(
      uids.map((uid) => this.cache?.set(this.leaseKey(uid), lease(uid), this.leaseSeconds)),
    ).catch((err: unknown) => this.log.warn({ err }, 'tunnel lease write failed'));
  }

  /** Removes a lease of this instance (a newer tunnel elsewhere may have taken the key: that one stays). */
  private async dropLease(uid: string): Promise<void> {
    if (!this.cache) return;
    try {
      const raw = await this.cache.get(this.leaseKey(uid));
      if (raw && (JSON.parse(raw) as Lease).instance === this.instanceId)
        await this.cache.del(this.leaseKey(uid));
    } catch (err) {
      this.log.warn({ err, uid }, 'tunnel lease removal failed');
    }
  }

  /** Closes every tunnel and marks their devices offline; agents reconnect to whichever server answers next. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.pingTimer);
    await this.unsubscribe?.().catch(() => {});
    const uids = [...this.tunnels.keys()];
    for (const t of this.tunnels.values()) {
      t.session.close();
      t.ws.terminate();
    }
    this.tunnels.clear();
    for (const ws of this.forwardWss.clients) ws.terminate();
    this.forwardWss.close();
    await Promise.allSettled(uids.map((uid) => this.dropLease(uid)));
    await Promise.allSettled(this.writes.values());
    if (uids.length > 0) {
      await this.peers.offline(uids).catch((err: unknown) => this.log.error({ err }, 'offline write failed'));
    }
    this.wss.close();
  }
}

function remoteAddress(req: IncomingMessage): string {
  return (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '').slice(0, 64);
}

const reasons: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  503: 'Service Unavailable',
};

/** Answers an upgrade request with a JSON refusal (the agent reads `status` from a 403). */
export function refuse(socket: Duplex, status: number, body: Record<string, string>): void {
  const text = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${reasons[status] ?? 'Refused'}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
  );
}
