import type { WebSocket } from 'ws';
import { MuxSession, type StreamHandler } from './session';

export { FrameDecoder, FrameType, INITIAL_WINDOW, MAX_DATA_PAYLOAD, ProtocolError } from './frame';
export type { FrameTransport, StreamHandler, StreamHeader } from './session';

import type { FrameTransport } from './session';

export { MuxSession, parseStreamHeader, SESSION_STREAM_KINDS } from './session';

/** The server end of a tunnel: it opens streams, pings and closes. */
export type Tunnel = MuxSession;

/**
 * Largest WebSocket message either end should accept (`maxPayload` of ws): one frame
 * is at most 64 KiB plus its header, so anything near this is hostile.
 */
export const TUNNEL_MAX_MESSAGE = 256 * 1024;

export interface TunnelOptions {
  /** How long `open` and `ping` wait for the peer; default 15 s. */
  timeoutMs?: number;
}

function bindWebSocket(ws: WebSocket, session: MuxSession): void {
  ws.binaryType = 'nodebuffer';
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    if (!isBinary) {
      session.transportClosed(new Error('text message on a tunnel'));
      ws.close(1003, 'binary frames only');
      return;
    }
    session.receive(data);
  });
  ws.on('close', () => session.transportClosed());
  // ws emits 'close' after 'error'; the listener only keeps an error from being thrown.
  ws.on('error', () => {});
}

/**
 * A tunnel's frames as WebSocket messages. With `pieces` (the server end) a data frame goes out as fragments of
 * one message: ws frames each piece without copying it, and the agent's ws joins them. Every buffer a process
 * allocates brings V8's next major collection closer (one per 64 MB), and on the server, with the larger heap,
 * those collections were the largest cost of moving bytes; the agent's heap is small, so it does the joining.
 */
function webSocketTransport(ws: WebSocket, pieces = false): FrameTransport {
  // Frames sent in one tick leave in one socket write: a burst of small frames (window credits, a run of control
  // messages) is otherwise a system call each.
  let corked = false;
  const cork = () => {
    if (corked) return;
    const socket = (ws as unknown as { _socket?: import('node:net').Socket })._socket;
    if (!socket || socket.destroyed) return;
    corked = true;
    socket.cork();
    process.nextTick(() => {
      corked = false;
      socket.uncork();
    });
  };
  return {
    send(frame: Buffer, sent: (error?: Error) => void) {
      if (ws.readyState !== ws.OPEN) return;
      cork();
      ws.send(frame, { binary: true }, (error) => sent(error ?? undefined));
    },
    ...(pieces
      ? {
          sendPieces(parts: Buffer[], sent: (error?: Error) => void) {
            if (ws.readyState !== ws.OPEN) return;
            cork();
            const last = parts.length - 1;
            parts.forEach((part, i) => {
              if (i < last) ws.send(part, { binary: true, fin: false });
              else ws.send(part, { binary: true, fin: true }, (error) => sent(error ?? undefined));
            });
          },
        }
      : {}),
    bufferedAmount: () => ws.bufferedAmount,
    close(code: number, reason: string) {
      if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(code, reason);
      // A peer that ignores the close handshake must not keep the socket (and memory).
      setTimeout(() => ws.terminate(), 5000).unref();
    },
  };
}

/**
 * Server end: wrap an authenticated WebSocket from an agent. Call it in the same tick as
 * the `handleUpgrade` callback hands over the socket (no await in between): frames that
 * arrive before the listener is bound are lost. ws turns Nagle off on the socket it
 * upgrades (setNoDelay in WebSocket#setSocket).
 */
export async function acceptTunnel(ws: WebSocket, options: TunnelOptions = {}): Promise<Tunnel> {
  const session = new MuxSession(webSocketTransport(ws, true), {
    role: 'opener',
    timeoutMs: options.timeoutMs,
  });
  bindWebSocket(ws, session);
  if (ws.readyState !== ws.OPEN) session.transportClosed(new Error('tunnel socket is not open'));
  return session;
}

export interface ServeTunnelOptions extends TunnelOptions {
  onStream: StreamHandler;
}

/** Agent end: serve the streams the server opens over this WebSocket. */
export function serveTunnel(ws: WebSocket, options: ServeTunnelOptions): MuxSession {
  const session = new MuxSession(webSocketTransport(ws), {
    role: 'acceptor',
    onStream: options.onStream,
    timeoutMs: options.timeoutMs,
    // Frames that fit several to one socket read of the server (64 KiB): its ws hands those on as views of the
    // read instead of copying each frame that spans two reads into new memory (see webSocketTransport).
    maxDataFrame: 16 * 1024,
  });
  bindWebSocket(ws, session);
  return session;
}
