import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DEVICE_PASSWORD } from '../integration/ssh/gateway-world';
import { AgentProcess } from './agent-process';
import { dropDatabase, freshDatabase, type LoginAnswer } from './server';

const BIN = path.resolve('bin/gatehouse.js');

/** A port nobody listens on right now (the kernel cannot tell a spawned process's port 0 back to the test). */
export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/**
 * A real `gatehouse serve` process, as an operator runs it: what ends the process (an unhandled rejection, a
 * thrown error in a callback) ends this one too, unlike a kernel inside the test runner. Its log is kept.
 * With TEST_REDIS_URL its counters and leases are in Redis under a key prefix of its own, as test/support/server.ts
 * does in-process; `sharing` starts another instance of the same installation (see docs/content/developers/architecture.md).
 */
export class ServerProcess {
  child!: ChildProcess;
  readonly lines: string[] = [];
  exited!: Promise<number | null>;
  exitCode: number | null | undefined;
  readonly dataDir = mkdtempSync(path.join(tmpdir(), 'gatehouse-proc-'));
  httpPort = 0;
  sshPort = 0;
  /** The internal listener (`/internal/...`), where the other instances reach this one: forwarded streams. */
  internalPort = 0;
  setupPath: string | undefined;

  private constructor(
    readonly databaseUrl: string | undefined,
    private readonly extraEnv: Record<string, string>,
    /** The `gatehouse` program to run: this checkout's, or another copy's (an installation under test). */
    readonly bin: string,
    /** The Redis key prefix of the installation (the instances sharing it use the same). */
    readonly redisPrefix: string,
    /** The instance whose store, Redis key space and secret key this one shares; it drops the database. */
    readonly sharing: ServerProcess | undefined,
  ) {}

  /**
   * `sharing`: another `gatehouse serve` of the same installation, on that one's database, Redis key space and
   * secret key (its key file), with listeners of its own. Needs TEST_DATABASE_URL and TEST_REDIS_URL (the
   * embedded store and the in-process cache live inside one process). Stop it before the one it shares.
   */
  static async start(
    env: Record<string, string> = {},
    opts: { bin?: string; sharing?: ServerProcess } = {},
  ): Promise<ServerProcess> {
    const { sharing } = opts;
    if (sharing && !(sharing.databaseUrl && process.env.TEST_REDIS_URL))
      throw new Error(
        'another instance shares PostgreSQL and Redis: set TEST_DATABASE_URL and TEST_REDIS_URL',
      );
    const server = new ServerProcess(
      sharing ? sharing.databaseUrl : await freshDatabase(),
      {
        // One installation has one secret key (core/secrets.ts): this instance reads the first one's key file.
        ...(sharing ? { GATEHOUSE_SECRET_KEY_FILE: path.join(sharing.dataDir, 'secret.key') } : {}),
        ...env,
      },
      opts.bin ?? sharing?.bin ?? BIN,
      sharing?.redisPrefix ?? `gatehouse-test-${randomBytes(6).toString('hex')}:`,
      sharing,
    );
    server.httpPort = await freePort();
    server.sshPort = await freePort();
    server.internalPort = await freePort();
    await server.spawn();
    return server;
  }

  /** How the other instances reach this one's internal listener (GATEHOUSE_INTERNAL_ADDRESS). */
  get internalUrl(): string {
    return `http://127.0.0.1:${this.internalPort}`;
  }

  get url(): string {
    return `http://127.0.0.1:${this.httpPort}`;
  }

  get alive(): boolean {
    return this.exitCode === undefined;
  }

  /** Starts the process (again, after a stop or kill: same store, same ports) and waits until it answers. */
  async spawn(): Promise<void> {
    this.exitCode = undefined;
    const from = this.lines.length;
    this.child = spawn(process.execPath, [this.bin, 'serve'], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: process.env.HOME ?? '/root',
        GATEHOUSE_DATA_DIR: this.dataDir,
        GATEHOUSE_HTTP_HOST: '127.0.0.1',
        GATEHOUSE_HTTP_PORT: String(this.httpPort),
        GATEHOUSE_SSH_HOST: '127.0.0.1',
        GATEHOUSE_SSH_PORT: String(this.sshPort),
        GATEHOUSE_PUBLIC_URL: `http://127.0.0.1:${this.httpPort}`,
        GATEHOUSE_INTERNAL_HOST: '127.0.0.1',
        GATEHOUSE_INTERNAL_PORT: String(this.internalPort),
        GATEHOUSE_INTERNAL_ADDRESS: this.internalUrl,
        GATEHOUSE_LOG_LEVEL: 'info',
        ...(this.databaseUrl ? { GATEHOUSE_DATABASE_URL: this.databaseUrl } : {}),
        // Each installation gets its own key space, so counters and leases left by earlier runs never leak in.
        ...(process.env.TEST_REDIS_URL
          ? { GATEHOUSE_REDIS_URL: process.env.TEST_REDIS_URL, GATEHOUSE_REDIS_PREFIX: this.redisPrefix }
          : {}),
        ...this.extraEnv,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // A pipe hands over chunks, not lines: a line cut between two chunks is kept whole, one per stream, and a last
    // line without its newline is kept when the stream ends.
    const read = (stream: NodeJS.ReadableStream | null) => {
      let partial = '';
      stream?.setEncoding('utf8');
      stream?.on('data', (text: string) => {
        const parts = (partial + text).split('\n');
        partial = parts.pop() ?? '';
        for (const line of parts) if (line) this.lines.push(line);
        if (process.env.SERVER_TEST_LOG) process.stderr.write(`[server] ${text}`);
      });
      stream?.on('end', () => {
        if (partial) this.lines.push(partial);
        partial = '';
      });
    };
    read(this.child.stdout);
    read(this.child.stderr);
    this.exited = new Promise((resolve) =>
      this.child.once('exit', (code, signal) => {
        this.exitCode = code ?? (signal ? -1 : null);
        resolve(this.exitCode);
      }),
    );
    for (let i = 0; i < 600; i++) {
      if (!this.alive)
        throw new Error(`gatehouse serve exited at start:\n${this.lines.slice(-20).join('\n')}`);
      if (this.lines.slice(from).some((l) => l.includes('"msg":"ready"'))) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const setup = this.lines
      .slice(from)
      .map((l) => /\/setup\?sign=[A-Za-z0-9_-]+/.exec(l)?.[0])
      .find(Boolean);
    if (setup) this.setupPath = `/api${setup}`;
  }

  async api(method: string, p: string, opts: { body?: unknown; token?: string } = {}) {
    const headers: Record<string, string> = {};
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(this.url + p, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    let body: any = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON
    }
    return { status: res.status, body };
  }

  /** First-run setup through the link the process printed, then a sign-in. */
  async setup(
    user = { name: 'Ada Admin', username: 'ada', email: 'ada@example.com', password: 'correct-horse' },
  ) {
    if (!this.setupPath) throw new Error('the server printed no setup link');
    const res = await this.api('POST', this.setupPath, { body: user });
    if (res.status !== 200) throw new Error(`setup answered ${res.status}: ${JSON.stringify(res.body)}`);
    const login = await this.api('POST', '/api/login', {
      body: { username: user.username, password: user.password },
    });
    if (login.status !== 200) throw new Error(`login answered ${login.status}`);
    return login.body as LoginAnswer;
  }

  /**
   * A real agent registered into the owner's namespace, accepted and online (an agent in a container lists under
   * containers, so both lists are looked at). Its device password is DEVICE_PASSWORD.
   */
  async acceptedAgent(owner: LoginAnswer, name: string, mac: string, keyDir: string): Promise<AcceptedAgent> {
    const agent = new AgentProcess({
      GATEHOUSE_SERVER_ADDRESS: this.url,
      GATEHOUSE_TENANT_ID: owner.tenant,
      GATEHOUSE_PRIVATE_KEY: path.join(keyDir, `${name}.key`),
      GATEHOUSE_PREFERRED_HOSTNAME: name,
      GATEHOUSE_PREFERRED_IDENTITY: mac,
      GATEHOUSE_KEEPALIVE_INTERVAL: '1',
      GATEHOUSE_SINGLE_USER_PASSWORD: DEVICE_PASSWORD,
    });
    let uid: string | undefined;
    let kind = 'devices';
    for (let i = 0; i < 200 && !uid; i++) {
      for (const k of ['devices', 'containers']) {
        const list = await this.api('GET', `/api/${k}?status=pending`, { token: owner.token });
        const found = (list.body as { uid: string; name: string }[]).find((d) => d.name === name);
        if (found) [uid, kind] = [found.uid, k];
      }
      if (!uid) await new Promise((r) => setTimeout(r, 100));
    }
    if (!uid) throw new Error(`the agent ${name} never registered`);
    const accepted = await this.api('PATCH', `/api/${kind}/${uid}/accept`, { token: owner.token });
    if (accepted.status !== 200) throw new Error(`accept answered ${accepted.status}`);
    for (let i = 0; i < 200; i++) {
      const d = await this.api('GET', `/api/${kind}/${uid}`, { token: owner.token });
      if (d.body.online) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    return { agent, uid, kind };
  }

  /**
   * The first log line matching `pattern`, waiting for it: the server logs a request after answering it, so its
   * line can reach the pipe after the caller has the answer.
   */
  async loggedLine(pattern: RegExp, timeoutMs = 5_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const line = this.lines.find((l) => pattern.test(l));
      if (line) return line;
      if (Date.now() > deadline)
        throw new Error(
          `the server never logged ${pattern}; its last lines:\n${this.lines.slice(-20).join('\n')}`,
        );
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Log lines (parsed) whose message contains `text`. */
  logged(text: string): Record<string, unknown>[] {
    return this.lines
      .filter((l) => l.includes(text))
      .map((l) => {
        try {
          return JSON.parse(l) as Record<string, unknown>;
        } catch {
          return { msg: l };
        }
      });
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (this.alive) this.child.kill(signal);
    await this.exited;
  }

  async stop(): Promise<void> {
    await this.kill('SIGTERM');
    if (!this.sharing) await dropDatabase(this.databaseUrl);
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

export interface AcceptedAgent {
  agent: AgentProcess;
  uid: string;
  kind: string;
}
