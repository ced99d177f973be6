import type { WebSocket } from 'ws';
import { MuxSession, type StreamHandler } from './session';

export { FrameDecoder, FrameType, INITIAL_WINDOW, MAX_DATA_PAYLOAD, ProtocolError } from './frame';
export type { FrameTransport, StreamHandler, StreamHeader } from './session';
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

function webSocketTransport(ws: WebSocket) {
  return {
    send(frame: Buffer, sent: (error?: Error) => void) {
      if (ws.readyState !== ws.OPEN) return;
      ws.send(frame, { binary: true }, (error) => sent(error ?? undefined));
    },
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
  const session = new MuxSession(webSocketTransport(ws), { role: 'opener', timeoutMs: options.timeoutMs });
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
  });
  bindWebSocket(ws, session);
  return session;
}
