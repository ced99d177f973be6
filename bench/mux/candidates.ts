import http2 from 'node:http2';
import type { Duplex } from 'node:stream';
import { acceptTunnel, serveTunnel } from '@gatehouse/protocol/mux';
import ssh2 from 'ssh2';
import { createWebSocketStream, type WebSocket } from 'ws';

/** The server end of one tunnel under test: it opens streams towards the agent. */
export interface ServerEnd {
  open(): Promise<Duplex>;
  close(): void;
}

/** One multiplexer design, both ends, over the same WebSocket transport. */
export interface Candidate {
  name: string;
  server(ws: WebSocket): Promise<ServerEnd>;
  agent(ws: WebSocket, onStream: (stream: Duplex) => void): void;
}

/** Our framing over WebSocket messages (agent/mux). */
export const gatehouseMux: Candidate = {
  name: 'gatehouse-mux',
  async server(ws) {
    const tunnel = await acceptTunnel(ws);
    return { open: () => tunnel.open({ kind: 'ssh' }), close: () => tunnel.close() };
  },
  agent(ws, onStream) {
    serveTunnel(ws, { onStream: (_header, stream) => onStream(stream) });
  },
};

/** Node's HTTP/2 run in reverse: the server is the HTTP/2 client, the agent the HTTP/2 server. */
export const reverseHttp2: Candidate = {
  name: 'reverse-http2',
  async server(ws) {
    const transport = createWebSocketStream(ws);
    const session = http2.connect('http://agent.invalid', {
      createConnection: () => transport,
      settings: { initialWindowSize: 256 * 1024 },
    });
    session.on('error', () => {});
    await new Promise<void>((resolve, reject) => {
      session.once('connect', () => resolve());
      session.once('error', reject);
    });
    return {
      open: () =>
        new Promise<Duplex>((resolve, reject) => {
          const stream = session.request({ ':method': 'POST', ':path': '/stream' }, { endStream: false });
          stream.once('response', () => resolve(stream));
          stream.once('error', reject);
        }),
      close: () => session.destroy(),
    };
  },
  agent(ws, onStream) {
    const server = http2.createServer({ settings: { initialWindowSize: 256 * 1024 } });
    // A tunnel closed by the other end surfaces as a session error; that is the end of it.
    server.on('sessionError', () => {});
    server.on('session', (session) => session.on('error', () => {}));
    server.on('stream', (stream) => {
      stream.respond({ ':status': 200 });
      onStream(stream);
    });
    server.emit('connection', createWebSocketStream(ws));
  },
};

const hostKey = ssh2.utils.generateKeyPairSync('ed25519').private;

/** SSH channels (ssh2 at both ends), as chisel and Teleport tunnel: one more layer of crypto. */
export const sshChannels: Candidate = {
  name: 'ssh2-channels',
  async server(ws) {
    const client = new ssh2.Client();
    client.on('error', () => {});
    await new Promise<void>((resolve, reject) => {
      client.once('ready', () => resolve());
      client.once('error', reject);
      client.connect({
        sock: createWebSocketStream(ws),
        username: 'tunnel',
        algorithms: { cipher: ['aes128-gcm@openssh.com'] },
      });
    });
    return {
      open: () =>
        new Promise<Duplex>((resolve, reject) => {
          client.forwardOut('127.0.0.1', 0, '127.0.0.1', 1, (error, channel) =>
            error ? reject(error) : resolve(channel),
          );
        }),
      close: () => client.end(),
    };
  },
  agent(ws, onStream) {
    const server = new ssh2.Server({ hostKeys: [hostKey] }, (connection) => {
      connection.on('error', () => {});
      connection.on('authentication', (ctx) => ctx.accept());
      connection.on('ready', () => {
        connection.on('tcpip', (accept) => onStream(accept()));
      });
    });
    server.injectSocket(createWebSocketStream(ws) as unknown as Parameters<typeof server.injectSocket>[0]);
  },
};

/** A WebSocket and nothing on it: the floor under every candidate's idle cost. */
export const bareWebSocket: Candidate = {
  name: 'bare-websocket',
  async server() {
    return { open: () => Promise.reject(new Error('no streams')), close: () => {} };
  },
  agent() {},
};

export const CANDIDATES: Candidate[] = [gatehouseMux, reverseHttp2, sshChannels];
export const ALL_CANDIDATES: Candidate[] = [...CANDIDATES, bareWebSocket];
