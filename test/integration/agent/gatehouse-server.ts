import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { definePlugin, type Kernel } from '@gatehouse/core';
import { createKernel } from '@gatehouse/server';
import type { DeviceAuthRequest } from '../../../agent/registration';
import { setupSignature } from '../../../plugins/community/setup/signature';
import { type ApiAnswer, defaultUser, dropDatabase, migratedDatabase } from '../../support/server';

/**
 * The real Gatehouse server for the agent's integration tests: a kernel on loopback with its store kept on disk
 * (PGlite in a data directory, or a fresh PostgreSQL database when TEST_DATABASE_URL is set) so that it can be
 * stopped and started again on the same port, as a restarted server is. Devices are accepted and rejected through
 * the API as a person does; the agent's registration calls are observed (not answered) by a small plugin.
 */
export class GatehouseServer {
  /** Bodies of every `POST /api/devices/auth` the server answered, in order. */
  readonly authCalls: DeviceAuthRequest[] = [];
  kernel: Kernel;
  tenantId = '';
  private token = '';
  private port = 0;
  private running = false;
  private readonly listeners: TcpServer[] = [];

  private constructor(
    kernel: Kernel,
    private readonly dataDir: string,
    private readonly databaseUrl: string | undefined,
    private readonly ssh: boolean,
  ) {
    this.kernel = kernel;
  }

  /** Boots a server and runs first-run setup, so `tenantId` names a real namespace. */
  static async start(opts: { ssh?: boolean } = {}): Promise<GatehouseServer> {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'gatehouse-agent-server-'));
    const databaseUrl = await migratedDatabase();
    const server = new GatehouseServer(undefined as never, dataDir, databaseUrl, opts.ssh ?? false);
    server.kernel = await server.boot(0);
    server.port = server.kernel.httpPort;
    const sign = setupSignature(server.kernel.container.cradle.keys);
    const setup = await server.api('POST', `/api/setup?sign=${sign}`, defaultUser);
    if (setup.status !== 200)
      throw new Error(`setup answered ${setup.status}: ${JSON.stringify(setup.body)}`);
    const login = await server.api('POST', '/api/login', {
      username: defaultUser.username,
      password: defaultUser.password,
    });
    server.token = login.body.token;
    server.tenantId = login.body.tenant;
    return server;
  }

  private async boot(port: number): Promise<Kernel> {
    const observer = definePlugin({
      name: 'agent-call-observer',
      dependsOn: ['community'],
      register: (ctx) => {
        ctx.middleware(async (koa, next) => {
          await next();
          if (koa.method === 'POST' && koa.path === '/api/devices/auth' && koa.status === 200) {
            this.authCalls.push((koa.request as unknown as { body: DeviceAuthRequest }).body);
          }
        });
      },
    });
    const kernel = await createKernel({
      env: {},
      memoryDb: false,
      ssh: this.ssh,
      extraPlugins: [observer],
      overrides: {
        edition: 'community',
        dataDir: this.dataDir,
        http: { port, host: '127.0.0.1' },
        ssh: { port: 0, host: '127.0.0.1' },
        internal: { port: 0, host: '127.0.0.1' },
        log: { level: process.env['TEST_LOG_LEVEL'] ?? 'silent', pretty: false },
        ...(this.databaseUrl ? { database: { url: this.databaseUrl, poolMax: 5 } } : {}),
      },
    });
    await kernel.start();
    this.running = true;
    return kernel;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get hub() {
    return this.kernel.container.cradle.tunnelHub;
  }

  async api(method: string, p: string, body?: unknown): Promise<ApiAnswer> {
    const headers: Record<string, string> = {};
    if (this.token) headers['authorization'] = `Bearer ${this.token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(this.url + p, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  }

  /** The device as the API shows it. */
  async device(uid: string): Promise<Record<string, unknown> & { status: string; online: boolean }> {
    const res = await this.api('GET', `/api/devices/${uid}`);
    if (res.status !== 200) throw new Error(`GET /api/devices/${uid} answered ${res.status}`);
    return res.body;
  }

  /** Accepts, rejects or sets a device back to pending through the API, as a namespace owner does. */
  async setStatus(uid: string, status: 'accept' | 'reject' | 'pending'): Promise<void> {
    const res = await this.api('PATCH', `/api/devices/${uid}/${status}`);
    if (res.status !== 200)
      throw new Error(`${status} of ${uid} answered ${res.status}: ${JSON.stringify(res.body)}`);
  }

  /**
   * Resolves once the device holds a tunnel to this server and the API says it is online. The hub writes presence
   * after it registers the tunnel, so the two are a few milliseconds apart (more under load), and a test that
   * reads the API must wait for the second.
   */
  async waitOnline(uid: string, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.hub.isOnline(uid) || !(await this.device(uid)).online) {
      if (Date.now() > deadline) throw new Error(`device ${uid} never came online`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /**
   * A TCP port whose every connection becomes a `ssh` stream to the device's agent through the server's tunnel
   * hub: the agent's SSH server reached without the gateway in between, so its own sign-in is what is tested.
   */
  async sshPort(uid: string): Promise<number> {
    const listener = createTcpServer((socket) => {
      socket.setNoDelay(true);
      socket.on('error', () => socket.destroy());
      this.hub.open(uid, { kind: 'ssh' }).then(
        (stream) => {
          stream.on('error', () => socket.destroy());
          socket.on('close', () => stream.destroy());
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

  /** Stops the server (tunnels close, the port stops answering); the store stays. */
  async halt(): Promise<void> {
    this.running = false;
    await this.kernel.stop();
  }

  /** Starts the server again on the same port and store, as after a restart. */
  async resume(): Promise<void> {
    this.kernel = await this.boot(this.port);
  }

  async stop(): Promise<void> {
    for (const listener of this.listeners) listener.close();
    if (this.running) await this.kernel.stop();
    await dropDatabase(this.databaseUrl);
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}
