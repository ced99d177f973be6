import { randomBytes } from 'node:crypto';
import type { Server, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { LocalAccount } from '@gatehouse/protocol/accounts';
import type { StreamHeader } from '@gatehouse/protocol/mux';
import {
  controlMessage,
  Message,
  MessageDecoder,
  type ReceivedMessage,
  readJson,
  SessionProtocolError,
  SIGNALS,
} from '@gatehouse/protocol/session-wire';
import { connectDeviceNetwork } from '../device-network';
import type { DeviceSignIn } from '../sign-in';
import { serveBuiltinSftp } from '../ssh-server/builtin-sftp';
import { joinSocket, listenOnDevice, remoteForwardRefusal, serveAgentSocket } from '../ssh-server/forwarding';
import { acceptableClientVariable, loginEnvironment } from '../ssh-server/login-environment';
import { type PtyRequest, type Running, runPiped, runShell, systemSftpServer } from '../ssh-server/session';
import { ProtocolChannel } from './channel';
import { sftpOverChannel } from './sftp';

/** How long a connection waiting on the device (`-R`, the ssh-agent socket) waits for the gateway's pickup. */
const PICKUP_TIMEOUT_MS = 15_000;
/** `-R` listeners one connection may hold, and connections that may wait for a pickup at once. */
const MAX_LISTENERS = 64;
const MAX_WAITING = 256;

export interface SessionServerOptions {
  signIn: DeviceSignIn;
  /** OpenSSH's sftp-server path or 'builtin'; by default the device's sftp-server if present. */
  sftpServer?: string | 'builtin';
  log: (message: string) => void;
}

type SessionStreamHeader = Extract<StreamHeader, { kind: 'connection' | 'session' | 'direct' | 'pickup' }>;

/**
 * The agent's end of the session protocol (wire.ts): the gateway signs a user in on a `connection` stream, then
 * opens `session`, `direct` and `pickup` streams that name that connection. It does what the agent's SSH server
 * does for the same requests (the same sign-in, the same session code), without a second SSH layer inside the
 * tunnel: the tunnel already proved it is this device's (the proof of possession at its opening), and the agent
 * offers the protocol only where the tunnel itself is private (device-agent.ts).
 */
export class SessionProtocolServer {
  private readonly connections = new Map<string, SignedInConnection>();

  constructor(private readonly options: SessionServerOptions) {}

  /** Serves one stream; rejects (the gateway sees the stream refused) when it names no signed-in connection. */
  async serve(header: SessionStreamHeader, stream: Duplex): Promise<void> {
    // The gateway resets streams it is done with; that error ends the stream here and nothing else.
    stream.on('error', () => {});
    if (header.kind === 'connection') return this.signIn(stream);
    const conn = this.connections.get(header.conn);
    if (!conn) throw new Error('no such signed-in connection');
    if (header.kind === 'session') return conn.session(stream);
    if (header.kind === 'pickup') return conn.pickup(header.ref, stream);
    conn.track(stream);
    return connectDeviceNetwork(header.host, header.port, stream);
  }

  /** Ends every connection (the agent stops, or its tunnel is gone). */
  close(): void {
    for (const conn of this.connections.values()) conn.close();
  }

  private signIn(stream: Duplex): void {
    const { log } = this.options;
    const decoder = new MessageDecoder();
    let conn: SignedInConnection | undefined;
    let asked = false;
    stream.on('error', () => {});
    stream.on('close', () => conn?.close());
    stream.on('data', (chunk: Buffer) => {
      try {
        for (const message of decoder.push(chunk)) {
          if (conn) conn.control(message);
          else if (asked || message.type !== Message.login) {
            throw new SessionProtocolError('a connection starts with one sign-in');
          } else {
            asked = true;
            this.login(stream, readJson(message.payload)).then(
              (signedIn) => {
                conn = signedIn;
              },
              (error: Error) => {
                log(`session sign-in failed: ${error.message}`);
                stream.destroy();
              },
            );
          }
        }
      } catch (error) {
        log(`session protocol: ${(error as Error).message}; connection closed`);
        stream.destroy();
      }
    });
  }

  private async login(
    stream: Duplex,
    body: Record<string, unknown>,
  ): Promise<SignedInConnection | undefined> {
    const { user, password } = body;
    if (typeof user !== 'string' || user.length === 0 || user.length > 256 || user.includes('\0')) {
      throw new SessionProtocolError('the sign-in names no user');
    }
    if (password !== undefined && (typeof password !== 'string' || password.length > 4096)) {
      throw new SessionProtocolError('the sign-in password is not text');
    }
    // No password: the gateway signs in with a public key the namespace allows, which the server (the end of
    // this agent's own tunnel) vouches for; the account must still exist here.
    const account =
      password === undefined
        ? await this.options.signIn.account(user)
        : await this.options.signIn.password(user, password);
    if (stream.destroyed) return undefined;
    if (!account) {
      stream.end(controlMessage(Message.loginRefused, { message: 'sign-in refused' }));
      return undefined;
    }
    const id = randomBytes(16).toString('hex');
    const conn = new SignedInConnection(id, account, stream, this.options);
    this.connections.set(id, conn);
    conn.onClose(() => this.connections.delete(id));
    stream.write(controlMessage(Message.loginOk, { id }));
    return conn;
  }
}

/** A connection waiting on the device for the gateway's pickup stream. */
interface Waiting {
  resolve(stream: Duplex): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/** One signed-in user connection: its account, its `-R` listeners, its ssh-agent socket and its streams. */
class SignedInConnection {
  private readonly listeners = new Map<string, Server>();
  /** Listen requests still binding: they count against MAX_LISTENERS before they are in `listeners`. */
  private binding = 0;
  private readonly waiting = new Map<number, Waiting>();
  private readonly streams = new Set<Duplex>();
  private agentSocket: Promise<{ path: string; close: () => void }> | undefined;
  private nextRef = 1;
  private closed = false;
  private readonly closeListeners: Array<() => void> = [];

  constructor(
    readonly id: string,
    private readonly account: LocalAccount,
    private readonly controlStream: Duplex,
    private readonly options: SessionServerOptions,
  ) {}

  onClose(listener: () => void): void {
    this.closeListeners.push(listener);
  }

  /** Ends with the connection: a stream of it that is still open when the user's connection goes. */
  track(stream: Duplex): void {
    this.streams.add(stream);
    stream.on('close', () => this.streams.delete(stream));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const server of this.listeners.values()) server.close();
    this.listeners.clear();
    for (const wait of this.waiting.values()) {
      clearTimeout(wait.timer);
      wait.reject(new Error('connection closed'));
    }
    this.waiting.clear();
    for (const stream of this.streams) stream.destroy();
    this.agentSocket?.then((socket) => socket.close()).catch(() => {});
    if (!this.controlStream.destroyed) this.controlStream.destroy();
    for (const listener of this.closeListeners) listener();
  }

  /** A message on the connection stream after the sign-in. */
  control(message: ReceivedMessage): void {
    if (message.type === Message.listen || message.type === Message.unlisten) {
      const body = readJson(message.payload);
      const { seq, address, port } = body;
      if (
        typeof seq !== 'number' ||
        !Number.isInteger(seq) ||
        typeof address !== 'string' ||
        address.length > 255
      ) {
        throw new SessionProtocolError('malformed listen request');
      }
      if (typeof port !== 'number' || !Number.isInteger(port) || port < 0 || port > 65535) {
        throw new SessionProtocolError('malformed listen request');
      }
      if (message.type === Message.listen) this.listen(seq, address, port);
      else this.unlisten(seq, address, port);
      return;
    }
    if (message.type === Message.decline) {
      const { ref } = readJson(message.payload);
      const wait = typeof ref === 'number' ? this.waiting.get(ref) : undefined;
      if (wait && typeof ref === 'number') {
        this.waiting.delete(ref);
        clearTimeout(wait.timer);
        wait.reject(new Error('the user side declined the connection'));
      }
      return;
    }
    throw new SessionProtocolError(`message ${message.type} does not belong on a connection stream`);
  }

  /** The gateway's stream for a connection waiting here. */
  async pickup(ref: number, stream: Duplex): Promise<void> {
    const wait = this.waiting.get(ref);
    if (!wait) throw new Error('nothing waits under that reference');
    this.waiting.delete(ref);
    clearTimeout(wait.timer);
    this.track(stream);
    wait.resolve(stream);
  }

  /** A session stream: one `open`, then input and control until either side ends it. */
  async session(stream: Duplex): Promise<void> {
    const { log } = this.options;
    this.track(stream);
    const channel = new ProtocolChannel(stream);
    const decoder = new MessageDecoder();
    let running: Running | undefined;
    let opened = false;
    let size: { cols: number; rows: number } | undefined;
    const handle = (message: ReceivedMessage) => {
      if (!opened) {
        if (message.type !== Message.open) throw new SessionProtocolError('a session starts with open');
        opened = true;
        this.start(stream, channel, readJson(message.payload)).then(
          (started) => {
            running = started;
            if (size) running?.resize?.(size.cols, size.rows);
          },
          (error: Error) => {
            log(`session refused: ${error.message}`);
            if (!stream.writableEnded)
              stream.end(controlMessage(Message.refused, { message: error.message }));
          },
        );
        return;
      }
      switch (message.type) {
        case Message.stdin:
          channel.input(message.payload);
          return;
        case Message.eof:
          channel.endInput();
          return;
        case Message.resize: {
          const { cols, rows } = readJson(message.payload);
          // SSH puts no bound on a window-change: a size the terminal cannot take is ignored, as open ignores it.
          if (!isDimension(cols) || !isDimension(rows)) return;
          size = { cols, rows };
          running?.resize?.(cols, rows);
          return;
        }
        case Message.signal: {
          const { name } = readJson(message.payload);
          if (typeof name === 'string' && SIGNALS.has(name)) running?.signal(name);
          return;
        }
        default:
          throw new SessionProtocolError(`message ${message.type} does not belong on a session stream`);
      }
    };
    stream.on('data', (chunk: Buffer) => {
      try {
        for (const message of decoder.push(chunk)) handle(message);
      } catch (error) {
        log(`session protocol: ${(error as Error).message}; session closed`);
        channel.destroy();
      }
    });
  }

  /** Starts what the open message asks for, as `serveSession` does for the same SSH requests. */
  private async start(
    stream: Duplex,
    channel: ProtocolChannel,
    body: Record<string, unknown>,
  ): Promise<Running | undefined> {
    const request = readOpen(body);
    const { account } = this;
    const extra: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.env))
      if (acceptableClientVariable(name)) extra[name] = value;
    if (request.pty) extra['TERM'] = request.pty.term;
    if (request.agentForward) {
      const socket = await this.forwardAgent().catch((error: Error) => {
        this.options.log(`agent forwarding refused: ${error.message}`);
        return undefined;
      });
      if (socket) extra['SSH_AUTH_SOCK'] = socket.path;
    }
    if (stream.destroyed) return undefined;
    const env = loginEnvironment(account, extra);
    const { command } = request;
    if (command.kind !== 'subsystem') {
      stream.write(controlMessage(Message.opened));
      return runShell(
        channel,
        account,
        command.kind === 'exec' ? command.command : undefined,
        env,
        request.pty,
      );
    }
    if (command.name !== 'sftp') throw new Error(`subsystem ${command.name} is not available on this device`);
    const sftpServer = this.options.sftpServer ?? systemSftpServer();
    if (sftpServer !== undefined && sftpServer !== 'builtin') {
      stream.write(controlMessage(Message.opened));
      return runPiped(channel, sftpServer, [], account, env);
    }
    // In-process file access would bypass another account's permissions.
    if (account.uid !== process.getuid?.())
      throw new Error(`no sftp-server on this device for ${account.name}`);
    stream.write(controlMessage(Message.opened));
    serveBuiltinSftp(sftpOverChannel(channel), account.home);
    return undefined;
  }

  /** The connection's ssh-agent socket, made at the first session that asks for one. */
  private forwardAgent(): Promise<{ path: string; close: () => void }> {
    this.agentSocket ??= serveAgentSocket(
      this.account,
      () => this.offer({ kind: 'agent' }),
      this.options.log,
    );
    return this.agentSocket;
  }

  private listen(seq: number, address: string, port: number): void {
    const reply = (answer: { ok: boolean; port?: number; message?: string }) =>
      this.sendControl(controlMessage(Message.reply, { seq, ...answer }));
    // A port-0 listener is in `listeners` under two keys: count servers. Binds still in progress count too, or a
    // burst of requests would all pass before the first is bound.
    const held = new Set(this.listeners.values()).size + this.binding;
    const refusal =
      remoteForwardRefusal(this.account, port) ??
      (held >= MAX_LISTENERS ? 'too many forwarded ports' : undefined);
    if (refusal) {
      this.options.log(`remote forwarding of port ${port} refused: ${refusal}`);
      reply({ ok: false, message: refusal });
      return;
    }
    this.binding++;
    listenOnDevice(address, port, (socket, bound) => this.incoming(socket, address, bound)).then(
      ({ server, port: bound }) => {
        this.binding--;
        if (this.closed) return server.close();
        this.listeners.set(`${address}:${port}`, server);
        if (port === 0) this.listeners.set(`${address}:${bound}`, server);
        reply({ ok: true, port: bound });
      },
      (error: Error) => {
        this.binding--;
        this.options.log(`remote forwarding on ${address}:${port} refused: ${error.message}`);
        reply({ ok: false, message: error.message });
      },
    );
  }

  private unlisten(seq: number, address: string, port: number): void {
    const key = `${address}:${port}`;
    const server = this.listeners.get(key);
    server?.close();
    for (const [other, held] of this.listeners) if (held === server) this.listeners.delete(other);
    this.sendControl(controlMessage(Message.reply, { seq, ok: server !== undefined }));
  }

  /** A connection to a `-R` port: it waits, paused, for the gateway to pick it up. */
  private incoming(socket: Socket, address: string, port: number): void {
    socket.on('error', () => {});
    socket.pause();
    this.offer({
      kind: 'tcpip',
      destIP: address,
      destPort: port,
      srcIP: (socket.remoteAddress ?? '').replace(/^::ffff:/, ''),
      srcPort: socket.remotePort ?? 0,
    }).then(
      (stream) => joinSocket(socket, stream),
      () => socket.destroy(),
    );
  }

  /** Tells the gateway a connection waits here; resolves with the stream it picks it up with. */
  private offer(info: Record<string, unknown>): Promise<Duplex> {
    if (this.closed) return Promise.reject(new Error('connection closed'));
    if (this.waiting.size >= MAX_WAITING) return Promise.reject(new Error('too many connections waiting'));
    const ref = this.nextRef++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(ref);
        reject(new Error('the gateway did not pick the connection up'));
      }, PICKUP_TIMEOUT_MS);
      timer.unref();
      this.waiting.set(ref, { resolve, reject, timer });
      this.sendControl(controlMessage(Message.incoming, { ref, ...info }));
    });
  }

  private sendControl(message: Buffer): void {
    if (!this.controlStream.destroyed && !this.controlStream.writableEnded) this.controlStream.write(message);
  }
}

function isDimension(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 10_000;
}

interface OpenRequest {
  command: { kind: 'shell' } | { kind: 'exec'; command: string } | { kind: 'subsystem'; name: string };
  pty?: PtyRequest;
  env: Record<string, string>;
  agentForward: boolean;
}

/** The open message, checked field by field. */
function readOpen(body: Record<string, unknown>): OpenRequest {
  const bad = (what: string) => new SessionProtocolError(`malformed open: ${what}`);
  const command = body['command'] as Record<string, unknown> | undefined;
  if (typeof command !== 'object' || command === null) throw bad('command');
  let parsed: OpenRequest['command'];
  if (command['kind'] === 'shell') parsed = { kind: 'shell' };
  else if (command['kind'] === 'exec' && typeof command['command'] === 'string') {
    parsed = { kind: 'exec', command: command['command'] };
  } else if (command['kind'] === 'subsystem' && typeof command['name'] === 'string') {
    parsed = { kind: 'subsystem', name: command['name'].slice(0, 64) };
  } else throw bad('command');
  let pty: PtyRequest | undefined;
  const rawPty = body['pty'] as Record<string, unknown> | undefined;
  if (rawPty !== undefined) {
    if (typeof rawPty !== 'object' || rawPty === null) throw bad('pty');
    const { term, cols, rows } = rawPty;
    if (typeof term !== 'string' || term.length > 64) throw bad('pty');
    pty = {
      term: term || 'xterm',
      cols: isDimension(cols) ? cols : 80,
      rows: isDimension(rows) ? rows : 24,
    };
  }
  const env: Record<string, string> = {};
  const rawEnv = body['env'];
  if (rawEnv !== undefined) {
    if (typeof rawEnv !== 'object' || rawEnv === null) throw bad('env');
    for (const [name, value] of Object.entries(rawEnv)) if (typeof value === 'string') env[name] = value;
  }
  return { command: parsed, ...(pty ? { pty } : {}), env, agentForward: body['agentForward'] === true };
}
