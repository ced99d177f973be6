import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ssh2 from 'ssh2';
import { AgentProcess } from '../../support/agent-process';
import { clientOptions, keyOptions, passwordOptions } from '../../support/openssh';
import { type LoginAnswer, startServer, type TestServer } from '../../support/server';
import { addMember } from '../../support/tenants';

export const DEVICE_PASSWORD = 'device-pass-1';

/**
 * The two ways the gateway reaches an agent: the session protocol (an agent on this host offers it), and SSH inside
 * the tunnel (what agents before 0.3.0 and agents across plain HTTP get). Suites that exercise every SSH feature
 * run once per upstream.
 */
export const UPSTREAMS = [
  { name: 'the session protocol', agentEnv: {}, kinds: ['connection', 'session', 'direct', 'pickup'] },
  { name: 'SSH inside the tunnel', agentEnv: { GATEHOUSE_SESSION_PROTOCOL: 'off' }, kinds: [] },
] as const;

/** The last lines of a server's log (JSON, debug and up), for the report of a hung tool. */
class LogTail {
  private lines: string[] = [];

  write(line: string): void {
    this.lines.push(line.trimEnd());
    if (this.lines.length > 2000) this.lines = this.lines.slice(-1000);
  }

  /** The last `n` lines that are not the log of an HTTP request (the agent's keepalive writes one a second). */
  lastBesidesRequests(n: number): string[] {
    return this.lines
      .filter((line) => !line.includes('"msg":"request"') || !line.includes('"level":30'))
      .slice(-n)
      .map((line) => line.slice(0, 400));
  }
}

export interface SshResult {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/** One server, one signed-in owner, and a device whose real agent is online and accepted. */
export class GatewayWorld {
  readonly dir: string;
  server!: TestServer;
  owner!: LoginAnswer;
  namespace!: string;
  agent!: AgentProcess;
  deviceUid!: string;
  readonly deviceName: string;

  /** The server's log: a hung tool's report ends with its last lines (the gateway logs each sign-in step). */
  private readonly serverLog = new LogTail();
  /** Settings of the agent's own (environment variables), beside the world's. */
  private agentEnv: Record<string, string> = {};

  private constructor(deviceName: string) {
    this.deviceName = deviceName;
    this.dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-ssh-'));
  }

  static async start(
    opts: {
      deviceName?: string;
      overrides?: Record<string, unknown>;
      agentEnv?: Record<string, string>;
    } = {},
  ): Promise<GatewayWorld> {
    const world = new GatewayWorld(opts.deviceName ?? 'lab-device');
    world.agentEnv = opts.agentEnv ?? {};
    world.server = await startServer({
      ...(opts.overrides ? { overrides: opts.overrides } : {}),
      logs: { level: 'debug', destination: world.serverLog },
    });
    world.owner = await world.server.setup();
    const ns = await world.api('GET', `/api/namespaces/${world.owner.tenant}`);
    world.namespace = ns.body?.name ?? (await world.namespaceName());
    world.agent = world.startAgent();
    world.deviceUid = await world.waitForDevice('pending');
    const accepted = await world.api('PATCH', `/api/devices/${world.deviceUid}/accept`);
    if (accepted.status !== 200) throw new Error(`accept answered ${accepted.status}`);
    await world.waitOnline();
    return world;
  }

  private async namespaceName(): Promise<string> {
    const row = await this.server.kernel.container.cradle
      .db('namespaces')
      .where({ tenant_id: this.owner.tenant })
      .first('name');
    return row.name as string;
  }

  api(method: string, p: string, body?: unknown) {
    return this.server.api(method, p, { token: this.owner.token, ...(body === undefined ? {} : { body }) });
  }

  startAgent(name = this.deviceName, identity = `02:00:00:00:00:${(name.length % 90) + 10}`): AgentProcess {
    return new AgentProcess({
      GATEHOUSE_SERVER_ADDRESS: this.server.url,
      GATEHOUSE_TENANT_ID: this.owner.tenant,
      GATEHOUSE_PRIVATE_KEY: path.join(this.dir, `${name}.key`),
      GATEHOUSE_PREFERRED_HOSTNAME: name,
      GATEHOUSE_PREFERRED_IDENTITY: identity,
      GATEHOUSE_KEEPALIVE_INTERVAL: '1',
      GATEHOUSE_SINGLE_USER_PASSWORD: DEVICE_PASSWORD,
      ...this.agentEnv,
    });
  }

  /** The stream kinds the server's tunnel hub holds for the device's agent (the session protocol's, or none). */
  async streamKinds(uid = this.deviceUid): Promise<readonly string[]> {
    const hub = this.server.kernel.container.resolve('tunnelHub' as never) as {
      streamKinds(uid: string): Promise<readonly string[]>;
    };
    return hub.streamKinds(uid);
  }

  async waitForDevice(status: string, name = this.deviceName): Promise<string> {
    for (let i = 0; i < 200; i++) {
      // An agent is a device wherever it runs, in a container too.
      const res = await this.api('GET', `/api/devices?status=${status}&per_page=100`);
      const list = Array.isArray(res.body) ? (res.body as { uid: string; name: string }[]) : [];
      const found = list.find((d) => d.name === name);
      if (found) return found.uid;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`device ${name} never showed as ${status}`);
  }

  /** The server's tunnel hub: which devices hold a tunnel. */
  private get hub(): { isOnline(uid: string): boolean } {
    return this.server.kernel.container.resolve('tunnelHub' as never);
  }

  async waitOnline(uid = this.deviceUid): Promise<void> {
    for (let i = 0; i < 300; i++) {
      if (this.hub.isOnline(uid)) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`device ${uid} never came online`);
  }

  /** `<user>@<namespace>.<device>` */
  target(user = 'root', device = this.deviceName): string {
    return `${user}@${this.namespace}.${device}`;
  }

  /** Common options of every OpenSSH client run: this gateway, no host key prompts, no user config. */
  sshOptions(): string[] {
    return clientOptions({ knownHosts: path.join(this.dir, 'known_hosts'), connectTimeout: 20 });
  }

  /** Options to sign in with the device password through sshpass. */
  passwordOptions(): string[] {
    return passwordOptions();
  }

  /** Options to sign in with a private key file only. */
  keyOptions(keyFile: string): string[] {
    return keyOptions(keyFile);
  }

  /**
   * What a hung tool's error says beside its stderr: whether the device's tunnel is up, the agent's last words and
   * the server's last log lines (its sign-in steps among them; HTTP requests that went well left out).
   */
  private state(): string {
    const agent = this.agent?.lines.slice(-10).join('\n') ?? '(no agent)';
    const server = this.serverLog.lastBesidesRequests(25).join('\n');
    return `device tunnel up: ${this.hub.isOnline(this.deviceUid)}; the agent's log ends:\n${agent}\nthe server's log ends:\n${server}`;
  }

  /** Runs a real OpenSSH tool (ssh, scp, sftp), with the password fed by sshpass when given. */
  run(
    tool: 'ssh' | 'scp' | 'sftp',
    args: string[],
    opts: { password?: string; input?: string | Buffer; timeoutMs?: number } = {},
  ): Promise<SshResult> {
    const argv = opts.password !== undefined ? ['-p', opts.password, tool, ...args] : args;
    const cmd = opts.password !== undefined ? 'sshpass' : tool;
    return new Promise((resolve, reject) => {
      const child = spawn(cmd, argv, { stdio: ['pipe', 'pipe', 'pipe'] });
      const out: Buffer[] = [];
      let err = '';
      child.stdout.on('data', (c: Buffer) => out.push(c));
      child.stderr.setEncoding('utf8').on('data', (c: string) => {
        err += c;
      });
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(
          new Error(
            `${tool} ${args.join(' ')} timed out; stdout ends: ${JSON.stringify(Buffer.concat(out).subarray(-200).toString())}; ` +
              `stderr ends: ${err.slice(-300)}\n${this.state()}`,
          ),
        );
      }, opts.timeoutMs ?? 45_000);
      child.once('error', reject);
      child.once('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout: Buffer.concat(out), stderr: err });
      });
      if (opts.input !== undefined) child.stdin.end(opts.input);
      else child.stdin.end();
    });
  }

  /**
   * `ssh` with the device password (or `opts.password`), running `command` on the device, through this world's
   * gateway (or the one on `opts.port`: another instance's).
   */
  sshPassword(
    command: string[],
    extra: string[] = [],
    target = this.target(),
    opts: { timeoutMs?: number; password?: string; port?: number } = {},
  ): Promise<SshResult> {
    const { password = DEVICE_PASSWORD, port = this.server.sshPort, ...rest } = opts;
    return this.run(
      'ssh',
      [
        ...this.sshOptions(),
        ...this.passwordOptions(),
        '-p',
        String(port),
        ...extra,
        `${target}@127.0.0.1`,
        ...command,
      ],
      { password, ...rest },
    );
  }

  /** Makes an account and adds it to the namespace with `role`; answers its sign-in (password `<username>-password-1`). */
  async addMember(username: string, role: string): Promise<LoginAnswer & { accountId: string }> {
    return addMember(this.server, this.owner, username, role);
  }

  /** `ssh` with a private key file only (no password, no prompts). */
  sshKey(
    keyFile: string,
    command: string[],
    target = this.target(),
    extra: string[] = [],
  ): Promise<SshResult> {
    return this.run('ssh', [
      ...this.sshOptions(),
      ...this.keyOptions(keyFile),
      '-p',
      String(this.server.sshPort),
      ...extra,
      `${target}@127.0.0.1`,
      ...command,
    ]);
  }

  /** A fresh Ed25519 key pair on disk; answers the private key path and the base64 authorized_keys line. */
  newKey(name: string): { file: string; data: string } {
    // ssh2's generator makes an unparseable key about once in 256: retry until ssh2 reads its own output.
    let pair = ssh2.utils.generateKeyPairSync('ed25519', { comment: name });
    while (ssh2.utils.parseKey(pair.private) instanceof Error) {
      pair = ssh2.utils.generateKeyPairSync('ed25519', { comment: name });
    }
    const file = path.join(this.dir, name);
    writeFileSync(file, pair.private, { mode: 0o600 });
    return { file, data: Buffer.from(pair.public).toString('base64') };
  }

  /** A fresh key registered for every user name and host of the namespace; throws unless the API took it. */
  async keyForEveryHost(name: string): Promise<{ file: string; data: string }> {
    const key = this.newKey(`${name}-key`);
    const created = await this.api('POST', '/api/sshkeys/public-keys', {
      name,
      data: key.data,
      username: '.*',
      filter: { hostname: '.*' },
    });
    if (created.status !== 200) throw new Error(`registering ${name} answered ${created.status}`);
    return key;
  }

  async stop(): Promise<void> {
    await this.agent?.stop();
    await this.server?.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
