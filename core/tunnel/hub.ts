import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { acceptTunnel, type StreamHeader, TUNNEL_MAX_MESSAGE, type Tunnel } from '@gatehouse/agent/mux/index';
import { type WebSocket, WebSocketServer } from 'ws';
import type { TokenService } from '../auth/tokens';
import type { UpgradeHandler } from '../http/server';
import type { Logger } from '../log';

/** Whether a device may hold a tunnel, decided by the plugin that owns devices. */
export type TunnelAdmission =
  | { ok: true }
  | { ok: false; status: 401 | 403 | 404; message: string; deviceStatus?: string };

/**
 * What the hub tells the owner of devices (the community devices feature) and asks it. Writes for one device
 * arrive in order: `online` before the `offline` of the same tunnel.
 */
export interface TunnelPresence {
  /** Called for every tunnel request after its device token verified: accepted devices only. */
  admit(device: { uid: string; tenantId: string }): Promise<TunnelAdmission>;
  online(uid: string, remoteAddr: string): Promise<void>;
  offline(uids: string[]): Promise<void>;
  /** Devices that answered a ping this round (one write for all of them). */
  alive(uids: string[]): Promise<void>;
}

/** `open` on a device without a live tunnel here. */
export class DeviceOffline extends Error {
  override name = 'DeviceOffline';
  constructor(readonly uid: string) {
    super(`device ${uid} is offline: its agent has no tunnel to this server`);
  }
}

export interface TunnelHubOptions {
  /** Seconds between pings of every tunnel (DESIGN.md section 6, 5). */
  pingIntervalSeconds?: number;
  /** How long a stream open or a ping waits for the agent. */
  timeoutMs?: number;
}

interface LiveTunnel {
  session: Tunnel;
  ws: WebSocket;
  remoteAddr: string;
  /** Which second of the ping interval this tunnel is pinged in. */
  slot: number;
}

export const AGENT_CONNECTION_PATH = '/agent/connection';

/**
 * The registry of live agent tunnels on this server. Agents dial `/agent/connection` with their device token; the
 * hub admits accepted devices, keeps one tunnel per device (a newer one replaces the older), pings them all on one
 * timer, and opens streams for the SSH gateway and the HTTP tunnel proxy.
 */
export class TunnelHub {
  private readonly tokens: TokenService;
  private readonly log: Logger;
  private readonly presence: TunnelPresence;
  private readonly tunnels = new Map<string, LiveTunnel>();
  private readonly writes = new Map<string, Promise<void>>();
  private readonly wss = new WebSocketServer({
    noServer: true,
    maxPayload: TUNNEL_MAX_MESSAGE,
    perMessageDeflate: false,
    clientTracking: false,
  });
  private readonly timeoutMs: number;
  private readonly pingTimer: NodeJS.Timeout;
  private readonly slots: number;
  private tick = 0;
  private nextSlot = 0;
  private stopped = false;

  constructor(
    deps: { tokens: TokenService; log: Logger; tunnelPresence: TunnelPresence },
    options: TunnelHubOptions = {},
  ) {
    this.tokens = deps.tokens;
    this.log = deps.log.child({ part: 'tunnels' });
    this.presence = deps.tunnelPresence;
    this.timeoutMs = options.timeoutMs ?? 15_000;
    // Each tunnel is pinged once per interval, in its own second of it: thousands of pings (and their one
    // last_seen write) at the same instant would stall the auth calls that arrive meanwhile.
    this.slots = Math.max(1, Math.round(options.pingIntervalSeconds ?? 30));
    this.pingTimer = setInterval(() => void this.pingSlot(this.tick++ % this.slots), 1000);
    this.pingTimer.unref();
  }

  /** Number of live tunnels on this server. */
  get size(): number {
    return this.tunnels.size;
  }

  isOnline(uid: string): boolean {
    const t = this.tunnels.get(uid);
    return t !== undefined && !t.session.closed;
  }

  /** Opens a stream to the device's agent; throws DeviceOffline when it has no tunnel here. */
  async open(uid: string, header: StreamHeader): Promise<Duplex> {
    const t = this.tunnels.get(uid);
    if (!t || t.session.closed) throw new DeviceOffline(uid);
    const stream = await t.session.open(header);
    // A tunnel that drops destroys its streams with an error. The caller may not be listening for errors at that
    // moment (between its await and its wiring, or a piece that only watches 'close'), and an unheard 'error' is
    // thrown out of the event loop and ends the whole server. Callers that listen still get 'error' and 'close'.
    stream.on('error', (err: Error) =>
      this.log.debug({ uid, err: err.message }, 'tunnel stream ended by error'),
    );
    return stream;
  }

  /** Drops the device's tunnel (rejected, removed, or marked offline by the internal call). */
  disconnect(uid: string): void {
    this.tunnels.get(uid)?.session.close();
  }

  /** The `/agent/connection` upgrade handler (RegisterContext.upgrade). */
  readonly upgrade: UpgradeHandler = async (req, socket, head) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== AGENT_CONNECTION_PATH) return false;
    if (this.stopped) {
      refuse(socket, 503, { message: 'server is shutting down' });
      return true;
    }
    const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    let device: { uid: string; tenantId: string };
    try {
      if (!bearer) throw new Error('no token');
      const claims = await this.tokens.verify(bearer, 'device');
      if (typeof claims.tenant !== 'string') throw new Error('no tenant');
      device = { uid: claims.sub, tenantId: claims.tenant };
    } catch {
      refuse(socket, 401, { message: 'missing or malformed jwt or API token' });
      return true;
    }
    const admission = await this.presence.admit(device);
    if (!admission.ok) {
      refuse(socket, admission.status, {
        message: admission.message,
        ...(admission.deviceStatus ? { status: admission.deviceStatus } : {}),
      });
      return true;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      void this.attach(device.uid, ws, remoteAddress(req));
    });
    return true;
  };

  private async attach(uid: string, ws: WebSocket, remoteAddr: string): Promise<void> {
    // acceptTunnel binds its listeners before it returns, in the tick handleUpgrade hands the socket over: frames
    // the agent sends right after the upgrade are not lost.
    const session = await acceptTunnel(ws, { timeoutMs: this.timeoutMs });
    // A tunnel that is already closed must neither replace a live one nor sit in the registry as online.
    if (this.stopped || session.closed) {
      session.close();
      return;
    }
    const live: LiveTunnel = { session, ws, remoteAddr, slot: this.nextSlot++ % this.slots };
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
      if (!this.stopped) this.serial(uid, () => this.presence.offline([uid]));
    });
    if (!session.closed) this.serial(uid, () => this.presence.online(uid, remoteAddr));
    this.log.debug({ uid, remoteAddr, replaced: previous !== undefined }, 'tunnel up');
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
      await this.presence.alive(alive).catch((err: unknown) => this.log.error({ err }, 'ping write failed'));
    }
  }

  /** Closes every tunnel and marks their devices offline; agents reconnect to whichever server answers next. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.pingTimer);
    const uids = [...this.tunnels.keys()];
    for (const t of this.tunnels.values()) {
      t.session.close();
      t.ws.terminate();
    }
    this.tunnels.clear();
    await Promise.allSettled(this.writes.values());
    if (uids.length > 0) {
      await this.presence
        .offline(uids)
        .catch((err: unknown) => this.log.error({ err }, 'offline write failed'));
    }
    this.wss.close();
  }
}

function remoteAddress(req: IncomingMessage): string {
  return (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '').slice(0, 64);
}

const reasons: Record<number, string> = {
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  503: 'Service Unavailable',
};

/** Answers an upgrade request with a JSON refusal (the agent reads `status` from a 403). */
function refuse(socket: Duplex, status: number, body: Record<string, string>): void {
  const text = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${reasons[status] ?? 'Refused'}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
  );
}
