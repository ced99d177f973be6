import type { IncomingMessage } from 'node:http';
import {
  type MuxSession,
  type StreamHandler,
  serveTunnel,
  TUNNEL_MAX_MESSAGE,
} from '@gatehouse/protocol/mux';
import { WebSocket } from 'ws';
import { tunnelIsPrivate } from './config';

/** Reconnect delays: full jitter over an exponential ceiling, so a restarted server is not hit in lockstep. */
export function backoffDelayMs(attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(60_000, 1000 * 2 ** Math.min(attempt, 16));
  return Math.round(random() * ceiling);
}

/** How a tunnel dial ended: open, with the served tunnel, or refused with the server's status and body. */
export type TunnelDial =
  | { ok: true; ws: WebSocket; tunnel: MuxSession }
  | { ok: false; status?: number; body?: string; error?: Error };

/**
 * Dials a tunnel WebSocket (`/agent/connection`, `/connector/connection`) and serves the streams the server opens
 * over it. The tunnel is bound before the socket opens: the server may send its first frame in the same TCP read as
 * the upgrade answer, and ws emits it at once, so a listener added later would miss it.
 */
export async function dialTunnel(
  serverAddress: URL,
  path: string,
  options: { headers: Record<string, string>; onStream: StreamHandler; timeoutMs: number },
): Promise<TunnelDial> {
  const url = new URL(path, serverAddress);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  const ws = new WebSocket(url, {
    headers: options.headers,
    maxPayload: TUNNEL_MAX_MESSAGE,
    perMessageDeflate: false,
    handshakeTimeout: 10_000,
    // RFC 6455 masks what a client sends so that an intermediary reading the frames cannot be fed bytes of a
    // script's choosing. Where none can read them (TLS, loopback) the mask only costs: ws masks and the server
    // unmasks every byte in JavaScript, the largest single cost of output from the device (bench/RESULTS.md).
    ...(tunnelIsPrivate(serverAddress) ? { generateMask: zeroMask } : {}),
  });
  const tunnel = serveTunnel(ws, { timeoutMs: options.timeoutMs, onStream: options.onStream });
  const opened = await new Promise<
    { ok: true } | { ok: false; status?: number; body?: string; error?: Error }
  >((resolve) => {
    ws.once('open', () => resolve({ ok: true }));
    ws.once('unexpected-response', (_request, response: IncomingMessage) => {
      readBody(response).then((body) => {
        resolve({ ok: false, status: response.statusCode, body });
        ws.terminate();
      });
    });
    ws.once('error', (error) => resolve({ ok: false, error }));
  });
  ws.on('error', () => {});
  if (!opened.ok) {
    tunnel.close();
    return opened;
  }
  return { ok: true, ws, tunnel };
}

/** An all-zero mask: ws then sends the payload as it is, and the server's ws skips unmasking it. */
function zeroMask(mask: Buffer): void {
  mask.fill(0);
}

export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as Error & { cause?: unknown }).cause;
  return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
}

function readBody(response: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let body = '';
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => {
      if (body.length < 4096) body += chunk;
    });
    response.on('end', () => resolve(body));
    response.on('error', () => resolve(body));
  });
}
