import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import {
  acceptTunnel,
  type MuxSession,
  type StreamHandler,
  serveTunnel,
  type Tunnel,
} from '@gatehouse/protocol/mux';
import { WebSocket, WebSocketServer } from 'ws';

/** A loopback ws server on port 0 whose connections become server-end tunnels. */
export class TunnelPair {
  readonly wss: WebSocketServer;
  private readonly serverSide: WebSocket[] = [];
  private readonly clients: WebSocket[] = [];

  private constructor(wss: WebSocketServer) {
    this.wss = wss;
    wss.on('connection', (ws) => this.serverSide.push(ws));
  }

  static async start(): Promise<TunnelPair> {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await once(wss, 'listening');
    return new TunnelPair(wss);
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.wss.address() as AddressInfo).port}`;
  }

  /**
   * Connects an agent end with `onStream` and returns both ends. `zeroMask` masks the agent's frames with zeros, as
   * the agent does on a private tunnel: ws then writes the agent's buffers to the socket as they are, not copies.
   */
  async connect(
    onStream: StreamHandler,
    opts: { zeroMask?: boolean } = {},
  ): Promise<{ tunnel: Tunnel; agent: MuxSession; agentSocket: WebSocket; serverSocket: WebSocket }> {
    const accepted = once(this.wss, 'connection') as Promise<[WebSocket]>;
    const agentSocket = new WebSocket(
      this.url,
      opts.zeroMask ? { generateMask: (mask: Buffer) => void mask.fill(0) } : {},
    );
    this.clients.push(agentSocket);
    await once(agentSocket, 'open');
    const [serverSocket] = await accepted;
    const agent = serveTunnel(agentSocket, { onStream, timeoutMs: 3000 });
    const tunnel = await acceptTunnel(serverSocket, { timeoutMs: 3000 });
    return { tunnel, agent, agentSocket, serverSocket };
  }

  async stop(): Promise<void> {
    for (const ws of [...this.clients, ...this.serverSide]) ws.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }
}

/** Collects everything a readable gives until it ends (rejects if it errors first). */
export function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.once('end', () => resolve(Buffer.concat(chunks)));
    stream.once('error', reject);
  });
}

/** An onStream handler that echoes every stream back to the opener. */
export const echo: StreamHandler = (_header, stream) => {
  stream.pipe(stream);
};
