import { readFileSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../log';

/**
 * Keeps the public listener inside the process's budget of open files.
 *
 * Every agent holds two connections: its tunnel, and the keep-alive connection of its availability call, which
 * it reuses every 30 s while the listener keeps idle connections for 65 s (for proxies in front). So 10,000
 * agents hold 20,000 sockets. When a process reaches its limit (`ulimit -n`), accept fails with EMFILE, and so do
 * the store's and the cache's new connections. In the reconnect storm after a restart that refused agents and
 * doubled the server's CPU (bench/RESULTS.md, "Open files in the reconnect storm").
 *
 * Two steps, as nginx takes with its reusable connections:
 * - past `reclaimAt` connections (at most once a second), connections that have sent nothing for
 *   FIRST_REQUEST_GRACE_MS since they were accepted are closed, and then the longest-idle keep-alive connections
 *   until the listener holds RECLAIM_TO of `reclaimAt`. A client whose idle connection is closed opens a new one
 *   for its next request;
 * - past `maxConnections`, a new connection is closed as soon as it is accepted (Node's own `maxConnections`), so
 *   the process keeps the files the store, the cache and the SSH gateway need.
 *
 * The silent connections are what a client holding sockets open to fill the listener sends: nothing. Node would
 * close each only after `headersTimeout` (60 s), and meanwhile every sweep would take the agents' idle connections
 * instead. They are told apart by age, not by address: behind the proxy every client has the proxy's address.
 */
export interface OpenFilesBudget {
  /** The process's limit on open files, from /proc/self/limits. */
  limit: number;
  /** Connections to the listener beyond which idle ones are closed. */
  reclaimAt: number;
  /** Connections to the listener beyond which a new one is closed at once. */
  maxConnections: number;
}

/** How long a new connection may go without its first request before a sweep near the limit closes it. */
export const FIRST_REQUEST_GRACE_MS = 10_000;
/** A sweep closes idle connections until the listener holds this share of `reclaimAt`. */
const RECLAIM_TO = 0.75;

/** The soft limit on open files of this process, or undefined where /proc does not say (not Linux). */
export function openFilesLimit(limits = '/proc/self/limits'): number | undefined {
  try {
    const soft = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync(limits, 'utf8'))?.[1];
    if (soft === undefined) return undefined;
    return soft === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(soft);
  } catch {
    return undefined;
  }
}

/**
 * The listener's share of `limit`: all but a reserve of a tenth (at least 256 files) for everything else the
 * process opens; idle connections are reclaimed from four fifths of that share.
 */
export function openFilesBudget(limit: number): OpenFilesBudget {
  const maxConnections = Math.max(64, limit - Math.max(256, Math.ceil(limit / 10)));
  return { limit, reclaimAt: Math.floor(maxConnections * 0.8), maxConnections };
}

/**
 * Applies `budget` to `server` (see above). Returns how many connections the listener holds, for tests.
 *
 * Idle means a connection that has answered all its requests and waits for the next: Node's own
 * `closeIdleConnections` also counts one that has not sent its first request yet, which would close a client's
 * connection before its first request, the new one among them. A connection that was upgraded (a tunnel, a web
 * terminal) is never idle.
 */
export function keepWithinOpenFiles(
  server: Server,
  budget: OpenFilesBudget,
  log: Logger,
  now: () => number = Date.now,
): () => number {
  server.maxConnections = budget.maxConnections;
  let open = 0;
  /** Idle connections, the longest idle first (a connection that goes idle again goes to the end). */
  const idle = new Set<Socket>();
  /** Connections yet to send their first request, with when each was accepted (so the oldest first). */
  const silent = new Map<Socket, number>();
  let lastReclaim = Number.NEGATIVE_INFINITY;
  let warnedReclaim = false;
  let warnedDrop = false;
  // Requests a connection has in flight: pipelined ones are announced before the first is answered.
  const inFlight = new WeakMap<Socket, number>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    idle.delete(socket);
    silent.delete(socket);
    inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
    res.once('close', () => {
      const left = (inFlight.get(socket) ?? 1) - 1;
      inFlight.set(socket, left);
      if (left === 0 && !socket.destroyed) idle.add(socket);
    });
  });
  // A kept-alive connection may carry an upgrade next (a proxy reusing its pool for a tunnel or a web terminal):
  // from then on it is not HTTP's to close.
  const leavesHttp = (req: IncomingMessage) => {
    idle.delete(req.socket);
    silent.delete(req.socket);
    inFlight.set(req.socket, Number.POSITIVE_INFINITY);
  };
  // (A listener for `connect` is not added: with none, Node closes a CONNECT request's connection itself.)
  server.on('upgrade', leavesHttp);
  server.on('connection', (socket: Socket) => {
    const accepted = now();
    open++;
    silent.set(socket, accepted);
    socket.once('close', () => {
      open--;
      idle.delete(socket);
      silent.delete(socket);
    });
    if (open < budget.reclaimAt || accepted - lastReclaim < 1_000) return;
    lastReclaim = accepted;
    if (!warnedReclaim) {
      warnedReclaim = true;
      log.warn(
        { connections: open, openFilesLimit: budget.limit },
        'connections near the limit on open files: idle keep-alive connections are being closed; ' +
          'allow this process more open files (ulimit -n, systemd LimitNOFILE) for more agents',
      );
    }
    // Sockets close a turn later, so `open` counts them still: what this sweep closed is counted here.
    let left = open;
    const overdue = accepted - FIRST_REQUEST_GRACE_MS;
    for (const [socket, since] of silent) {
      if (since > overdue) break;
      silent.delete(socket);
      socket.destroy();
      left--;
    }
    const target = Math.floor(budget.reclaimAt * RECLAIM_TO);
    for (const socket of idle) {
      if (left <= target) break;
      idle.delete(socket);
      socket.destroy();
      left--;
    }
  });
  // Node counts a connection it refused for maxConnections; say so once, with the same advice.
  server.on('drop', () => {
    if (warnedDrop) return;
    warnedDrop = true;
    log.warn(
      { connections: open, openFilesLimit: budget.limit },
      'connections refused at the limit on open files; allow this process more (ulimit -n, systemd LimitNOFILE)',
    );
  });
  return () => open;
}
