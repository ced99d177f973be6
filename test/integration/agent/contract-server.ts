import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, randomUUID, sign } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { WebSocketServer } from 'ws';
import { acceptTunnel, TUNNEL_MAX_MESSAGE, type Tunnel } from '../../../agent/mux';
import type { DeviceAuthRequest } from '../../../agent/registration';

/**
 * The server side of the agent protocol (DESIGN.md section 6), as the agent program sees
 * it: /info, /api/devices/auth, /api/auth/ssh and the /agent/connection WebSocket, built
 * on the real multiplexer. It stands in for the Gatehouse server, which is built on top of
 * the agent after it, so that the agent program is tested against the contract it was
 * given; the server's own integration tests run real agents against the real thing.
 */
export class ContractServer {
  readonly tenantId = randomUUID();
  readonly authCalls: DeviceAuthRequest[] = [];
  private readonly defaultGatewayKey: KeyObject = generateKeyPairSync('ed25519').privateKey;
  /** Signs a gateway sign-in blob, as the server does with its Ed25519 gateway key. */
  gatewaySign: (data: Buffer) => Buffer = (data) => sign(null, data, this.defaultGatewayKey);
  readonly devices = new Map<string, { status: string; tokens: Set<string>; request: DeviceAuthRequest }>();
  readonly tunnels = new Map<string, Tunnel>();
  tunnelsOpened = 0;
  private readonly http: Server;
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: TUNNEL_MAX_MESSAGE });
  private readonly tunnelWaiters: Array<(tunnel: Tunnel) => void> = [];
  private readonly listeners: TcpServer[] = [];

  private constructor(http: Server) {
    this.http = http;
  }

  static async start(): Promise<ContractServer> {
    const http = createServer();
    const server = new ContractServer(http);
    http.on('request', (req, res) => {
      server.route(req, res).catch(() => {
        res.writeHead(500).end(JSON.stringify({ message: 'Internal Server Error' }));
      });
    });
    http.on('upgrade', (req, socket, head) => server.upgrade(req, socket, head));
    http.listen(0, '127.0.0.1');
    await once(http, 'listening');
    return server;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.http.address() as AddressInfo).port}`;
  }

  setStatus(uid: string, status: 'accepted' | 'pending' | 'rejected'): void {
    this.devices.get(uid)!.status = status;
  }

  /** Resolves with the next tunnel an agent opens (or the current one if `current`). */
  nextTunnel(): Promise<Tunnel> {
    return new Promise((resolve) => this.tunnelWaiters.push(resolve));
  }

  /** A TCP port whose every connection is carried to the agent's SSH server as a `ssh` stream. */
  async sshPort(uid: string): Promise<number> {
    const listener = createTcpServer((socket) => {
      socket.setNoDelay(true);
      const tunnel = this.tunnels.get(uid);
      if (!tunnel) return socket.destroy();
      tunnel.open({ kind: 'ssh' }).then(
        (stream) => {
          socket.on('error', () => stream.destroy());
          stream.on('error', () => socket.destroy());
          socket.pipe(stream).pipe(socket);
        },
        () => socket.destroy(),
      );
    });
    this.listeners.push(listener);
    listener.listen(0, '127.0.0.1');
    await once(listener, 'listening');
    return (listener.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    for (const listener of this.listeners) listener.close();
    for (const tunnel of this.tunnels.values()) tunnel.close();
    for (const client of this.wss.clients) client.terminate();
    this.http.closeAllConnections();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }

  private deviceByToken(req: IncomingMessage): string | undefined {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    for (const [uid, device] of this.devices) if (token && device.tokens.has(token)) return uid;
    return undefined;
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const json = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (req.method === 'GET' && url.pathname === '/info') {
      return json(200, {
        version: 'contract',
        endpoints: { ssh: '127.0.0.1:2222', api: '127.0.0.1:8080' },
        setup: true,
        authentication: { local: true, saml: false },
      });
    }
    const body = await readJson(req);
    if (req.method === 'POST' && url.pathname === '/api/devices/auth') {
      const request = body as DeviceAuthRequest;
      if (typeof request?.identity?.mac !== 'string' || typeof request.public_key !== 'string') {
        return json(400, { message: 'malformed' });
      }
      if (request.tenant_id !== this.tenantId) return json(404, { message: 'namespace not found' });
      this.authCalls.push(request);
      const uid = createHash('sha256')
        .update(`${request.tenant_id}\n${request.identity.mac}\n${request.public_key}`)
        .digest('hex');
      const device = this.devices.get(uid) ?? { status: 'pending', tokens: new Set<string>(), request };
      this.devices.set(uid, device);
      const token = randomBytes(24).toString('hex');
      device.tokens.add(token);
      return json(200, { uid, token, name: request.hostname, namespace: 'dev' });
    }
    if (req.method === 'POST' && url.pathname === '/api/auth/ssh') {
      if (!this.deviceByToken(req)) return json(401, { message: 'missing or malformed jwt or API token' });
      const { data } = body as { data: string };
      const signature = this.gatewaySign(Buffer.from(data, 'base64'));
      return json(200, { signature: signature.toString('base64') });
    }
    json(404, { message: 'not found' });
  }

  private upgrade(req: IncomingMessage, socket: import('node:stream').Duplex, head: Buffer): void {
    const uid = this.deviceByToken(req);
    const refuse = (status: number, body: unknown): void => {
      const text = JSON.stringify(body);
      socket.end(
        `HTTP/1.1 ${status} Refused\r\ncontent-type: application/json\r\ncontent-length: ${text.length}\r\n` +
          `connection: close\r\n\r\n${text}`,
      );
    };
    if (!uid || new URL(req.url ?? '/', this.url).pathname !== '/agent/connection') {
      refuse(401, { message: 'missing or malformed jwt or API token' });
      return;
    }
    const device = this.devices.get(uid)!;
    if (device.status !== 'accepted') {
      refuse(403, { message: `device is ${device.status}`, status: device.status });
      return;
    }
    this.wss.handleUpgrade(req, socket, head, async (ws) => {
      const tunnel = await acceptTunnel(ws);
      this.tunnelsOpened++;
      // A newer tunnel for the same device replaces the older one.
      this.tunnels.get(uid)?.close();
      this.tunnels.set(uid, tunnel);
      tunnel.on('close', () => {
        if (this.tunnels.get(uid) === tunnel) this.tunnels.delete(uid);
      });
      for (const waiter of this.tunnelWaiters.splice(0)) waiter(tunnel);
    });
  }
}

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      text += chunk;
    });
    req.on('end', () => {
      try {
        resolve(text ? JSON.parse(text) : undefined);
      } catch {
        resolve(undefined);
      }
    });
  });
}

const AGENT_MAIN = fileURLToPath(new URL('../../../agent/main.ts', import.meta.url));

/** The real agent program as a child process, with its log lines collected. */
export class AgentProcess {
  readonly child: ChildProcess;
  readonly lines: string[] = [];
  private readonly lineWaiters: Array<{ pattern: RegExp; resolve: (line: string) => void }> = [];
  readonly exited: Promise<number | null>;

  constructor(env: Record<string, string>, args: string[] = []) {
    this.child = spawn(process.execPath, ['--import', 'tsx', AGENT_MAIN, ...args], {
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.env['HOME'] ?? '/root', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let buffered = '';
    const onText = (text: string) => {
      buffered += text;
      const parts = buffered.split('\n');
      buffered = parts.pop() ?? '';
      for (const line of parts) {
        this.lines.push(line);
        if (process.env['AGENT_TEST_LOG']) process.stderr.write(`[agent] ${line}\n`);
        for (const waiter of [...this.lineWaiters]) {
          if (waiter.pattern.test(line)) {
            this.lineWaiters.splice(this.lineWaiters.indexOf(waiter), 1);
            waiter.resolve(line);
          }
        }
      }
    };
    this.child.stdout!.setEncoding('utf8').on('data', onText);
    this.child.stderr!.setEncoding('utf8').on('data', onText);
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
  }

  /** Resolves with the first log line (past or future) matching `pattern`. */
  waitFor(pattern: RegExp): Promise<string> {
    const seen = this.lines.find((line) => pattern.test(line));
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.lineWaiters.push({ pattern, resolve }));
  }

  /** Waits for a line after those already seen. */
  waitForNext(pattern: RegExp): Promise<string> {
    return new Promise((resolve) => this.lineWaiters.push({ pattern, resolve }));
  }

  async stop(): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    return this.exited;
  }
}
