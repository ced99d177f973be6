import type { Duplex } from 'node:stream';
import { Readable, Writable } from 'node:stream';
import type { Logger } from '@gatehouse/core';
import type { StreamHeader } from '@gatehouse/protocol/mux';
import {
  controlMessage,
  dataMessages,
  Message,
  MessageDecoder,
  type ReceivedMessage,
  readJson,
  SessionProtocolError,
  SIGNALS,
} from '@gatehouse/protocol/session-wire';
import type ssh2 from 'ssh2';
import type { SshDevice } from './admission';
import type {
  ExitStatus,
  IncomingForward,
  SessionRequest,
  TargetSession,
  TerminalSize,
  Upstream,
  UpstreamAuth,
  UpstreamForwarding,
} from './upstream';
import { UpstreamRefused } from './upstream';

/** Opens tunnel streams to a device's agent (the tunnel hub). */
export interface SessionStreamOpener {
  open(uid: string, header: StreamHeader): Promise<Duplex>;
}

/** How long a listen or unlisten may wait for the agent's answer. */
const REPLY_TIMEOUT_MS = 20_000;

/**
 * Signs in on the device over the session protocol (agent/session-protocol/wire.ts): a `connection` stream carries the
 * sign-in (the user's password, checked by the agent against the device's accounts, or, for a public key the
 * namespace allows, no password: the server vouches, as it did by signing the gateway key's blob), and each
 * session, forwarded port and ssh-agent connection is a stream of its own that names the connection.
 */
export async function signInOverSessions(
  tunnels: SessionStreamOpener,
  device: SshDevice,
  user: string,
  auth: UpstreamAuth,
  agent: ssh2.BaseAgent | undefined,
  timeoutMs: number,
  log?: Logger,
): Promise<Upstream> {
  const started = Date.now();
  const control = await tunnels.open(device.uid, { kind: 'connection' });
  log?.debug({ device: device.uid, ms: Date.now() - started }, 'device connection stream open');
  const decoder = new MessageDecoder();
  const id = await new Promise<string>((resolve, reject) => {
    const fail = (error: Error) => {
      clearTimeout(timer);
      control.off('data', onData);
      control.destroy();
      reject(error);
    };
    const timer = setTimeout(() => fail(new Error('the device did not answer the sign-in')), timeoutMs);
    const onData = (chunk: Buffer) => {
      try {
        const [first] = decoder.push(chunk);
        if (!first) return;
        if (first.type === Message.loginOk) {
          const { id } = readJson(first.payload);
          if (typeof id !== 'string' || !/^[0-9a-f]{32}$/.test(id)) throw new SessionProtocolError('bad id');
          clearTimeout(timer);
          control.off('data', onData);
          control.off('close', onClose);
          resolve(id);
        } else if (first.type === Message.loginRefused) {
          fail(new UpstreamRefused('the device refused the sign-in'));
        } else throw new SessionProtocolError(`message ${first.type} before the sign-in answer`);
      } catch (error) {
        fail(error as Error);
      }
    };
    const onClose = () => fail(new Error('the device closed the connection during sign-in'));
    control.on('data', onData);
    control.once('close', onClose);
    control.on('error', () => {});
    control.write(
      controlMessage(Message.login, { user, ...('password' in auth ? { password: auth.password } : {}) }),
    );
  });
  return new SessionUpstream(tunnels, device.uid, id, control, decoder, agent, timeoutMs);
}

interface PendingReply {
  resolve(port: number | undefined): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

type IncomingListener = Parameters<UpstreamForwarding['onIncoming']>[0];

/** A signed-in connection of the session protocol, as the gateway's Upstream. */
class SessionUpstream implements Upstream {
  readonly forwarding: UpstreamForwarding;
  private readonly replies = new Map<number, PendingReply>();
  private nextSeq = 1;
  private incomingListener: IncomingListener | undefined;
  /** The user asked for agent forwarding in a session of this connection: only then is the user's agent reached. */
  private agentAsked = false;
  /** `address:port` of each `-R` listener the device granted: only connections to these are passed to the user. */
  private readonly listening = new Set<string>();
  /** The connection's open streams: its sessions, forwarded and picked-up connections. */
  private readonly streams = new Set<Duplex>();

  constructor(
    private readonly tunnels: SessionStreamOpener,
    private readonly uid: string,
    private readonly id: string,
    private readonly control: Duplex,
    decoder: MessageDecoder,
    private readonly agent: ssh2.BaseAgent | undefined,
    /** How long a session's open may wait for the device's answer. */
    private readonly timeoutMs: number,
  ) {
    control.on('data', (chunk: Buffer) => {
      try {
        for (const message of decoder.push(chunk)) this.controlMessage(message);
      } catch {
        // A device that breaks the protocol loses this connection, nothing else.
        control.destroy();
      }
    });
    control.once('close', () => {
      for (const stream of this.streams) stream.destroy();
      for (const pending of this.replies.values()) {
        clearTimeout(pending.timer);
        pending.reject(new Error('connection closed'));
      }
      this.replies.clear();
    });
    this.forwarding = {
      connect: (src, dest) =>
        this.stream({
          kind: 'direct',
          conn: id,
          host: dest.host,
          port: dest.port,
          srcIP: src.ip,
          srcPort: src.port,
        }),
      listen: (address, port) =>
        this.ask(Message.listen, address, port).then((answer) => {
          const bound = answer ?? port;
          this.listening.add(`${address}:${bound}`);
          return bound;
        }),
      unlisten: (address, port) =>
        this.ask(Message.unlisten, address, port).then(() => {
          this.listening.delete(`${address}:${port}`);
        }),
      onIncoming: (listener) => {
        this.incomingListener = listener;
      },
    };
  }

  async open(request: SessionRequest): Promise<TargetSession> {
    if (request.agentForward) this.agentAsked = true;
    const stream = await this.stream({ kind: 'session', conn: this.id });
    const session = new ProtocolSession(stream, this.timeoutMs);
    stream.write(
      controlMessage(Message.open, {
        command: request.command,
        ...(request.pty ? { pty: request.pty } : {}),
        env: request.env,
        agentForward: request.agentForward,
      }),
    );
    // A session that never opened holds its tunnel stream until the connection ends unless it is closed here.
    await session.opened.catch((error: Error) => {
      stream.destroy();
      throw error;
    });
    return session;
  }

  onClose(listener: () => void): void {
    if (this.control.destroyed) queueMicrotask(listener);
    else this.control.once('close', listener);
  }

  end(): void {
    this.control.destroy();
  }

  private async stream(header: StreamHeader): Promise<Duplex> {
    if (this.control.destroyed) throw new Error('connection closed');
    const stream = await this.tunnels.open(this.uid, header);
    // A stream outlives nothing of its connection (one set, not a close listener per stream: twenty sessions on
    // one connection would trip Node's leak warning).
    if (this.control.destroyed) {
      stream.destroy();
      throw new Error('connection closed');
    }
    this.streams.add(stream);
    stream.once('close', () => this.streams.delete(stream));
    return stream;
  }

  private ask(type: typeof Message.listen | typeof Message.unlisten, address: string, port: number) {
    const seq = this.nextSeq++;
    return new Promise<number | undefined>((resolve, reject) => {
      if (this.control.destroyed) return reject(new Error('connection closed'));
      const timer = setTimeout(() => {
        this.replies.delete(seq);
        reject(new Error('the device did not answer'));
      }, REPLY_TIMEOUT_MS);
      this.replies.set(seq, { resolve, reject, timer });
      this.control.write(controlMessage(type, { seq, address, port }));
    });
  }

  private controlMessage(message: ReceivedMessage): void {
    const body = readJson(message.payload);
    if (message.type === Message.reply) {
      const pending = typeof body['seq'] === 'number' ? this.replies.get(body['seq']) : undefined;
      if (!pending) return;
      this.replies.delete(body['seq'] as number);
      clearTimeout(pending.timer);
      if (body['ok'] !== true) pending.reject(new Error(String(body['message'] ?? 'refused')));
      else pending.resolve(typeof body['port'] === 'number' ? body['port'] : undefined);
      return;
    }
    if (message.type === Message.incoming) {
      const { ref } = body;
      if (typeof ref !== 'number' || !Number.isInteger(ref) || ref < 1)
        throw new SessionProtocolError('bad ref');
      const pickup = () => this.stream({ kind: 'pickup', conn: this.id, ref });
      const decline = () => this.send(controlMessage(Message.decline, { ref }));
      if (body['kind'] === 'agent') {
        this.relayAgent(pickup, decline);
        return;
      }
      const info: IncomingForward = {
        destIP: String(body['destIP'] ?? '').slice(0, 255),
        destPort: Number(body['destPort']) || 0,
        srcIP: String(body['srcIP'] ?? '').slice(0, 255),
        srcPort: Number(body['srcPort']) || 0,
      };
      // Only to a port the user had the device listen on: the user's client is not asked about any other.
      if (
        body['kind'] !== 'tcpip' ||
        !this.incomingListener ||
        !this.listening.has(`${info.destIP}:${info.destPort}`)
      ) {
        decline();
        return;
      }
      this.incomingListener(info, pickup, decline);
      return;
    }
    throw new SessionProtocolError(`message ${message.type} does not belong on a connection stream`);
  }

  /**
   * An answer on the connection stream. A device that sends faster than it reads the answers is not read until
   * it has taken them: they wait in its window, not in this process.
   */
  private send(message: Buffer): void {
    const { control } = this;
    if (control.destroyed || control.writableEnded) return;
    if (!control.write(message) && !control.isPaused()) {
      control.pause();
      control.once('drain', () => control.resume());
    }
  }

  /** A program on the device uses the forwarded ssh-agent: join it to a channel to the user's own agent. */
  private relayAgent(pickup: () => Promise<Duplex>, decline: () => void): void {
    const agent = this.agent;
    if (!agent?.getStream || !this.agentAsked) {
      decline();
      return;
    }
    agent.getStream((err, user) => {
      if (err || !user) return decline();
      pickup().then(
        (device) => {
          device.pipe(user).pipe(device);
          device.on('close', () => user.destroy());
          user.on('close', () => device.destroy());
          user.on('error', () => device.destroy());
        },
        () => user.destroy(),
      );
    });
  }
}

/**
 * One session of the session protocol, on the gateway: stdin goes out as messages, stdout and stderr come in as
 * readables with back-pressure (while either holds too much, the tunnel stream is paused, so the agent's window
 * closes and the program blocks on its output), and the close follows the last byte of both.
 */
export class ProtocolSession implements TargetSession {
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  readonly opened: Promise<void>;
  private readonly exitListeners: Array<(exit: ExitStatus) => void> = [];
  private readonly closeListeners: Array<() => void> = [];
  private closed = false;
  private ended = 0;
  private isOpen = false;
  /** The exit status, kept for a listener that comes after it (it may arrive with `opened`, in one read). */
  private exit: ExitStatus | undefined;
  /** The outputs that took more than they hold (their `push` said stop): the device waits until none is. */
  private readonly full = new Set<Readable>();

  constructor(
    private readonly stream: Duplex,
    openTimeoutMs: number,
  ) {
    // The device's stream is paused while either output is full and resumed once neither is. The reader of a full
    // output may be held for long (a user or browser that does not read, a recording behind the store); were the
    // other output's reads to resume the stream, a device writing a byte of stderr now and then would go on filling
    // the held stdout without bound.
    const readFrom = (output: () => Readable) => () => {
      this.full.delete(output());
      if (this.full.size === 0) stream.resume();
    };
    this.stdout = new Readable({ read: readFrom(() => this.stdout), highWaterMark: 256 * 1024 });
    this.stderr = new Readable({ read: readFrom(() => this.stderr), highWaterMark: 256 * 1024 });
    for (const output of [this.stdout, this.stderr]) {
      output.on('error', () => {});
      output.once('end', () => {
        if (++this.ended === 2) this.finish();
      });
    }
    this.stdin = new Writable({
      highWaterMark: 256 * 1024,
      write: (chunk: Buffer, _encoding, done) => this.send([chunk], done),
      writev: (chunks, done) =>
        this.send(
          chunks.map((c) => c.chunk as Buffer),
          done,
        ),
      final: (done) => {
        if (stream.destroyed || stream.writableEnded) return done();
        stream.write(controlMessage(Message.eof), () => done());
      },
    });
    this.stdin.on('error', () => {});

    let settle: { resolve(): void; reject(error: Error): void } | undefined;
    this.opened = new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error('the device did not answer the session request')),
        openTimeoutMs,
      );
      timer.unref();
      settle = {
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
    });
    const decoder = new MessageDecoder();
    stream.on('data', (chunk: Buffer) => {
      try {
        for (const message of decoder.push(chunk)) this.received(message, settle);
      } catch {
        stream.destroy();
      }
    });
    stream.on('end', () => {
      this.stdout.push(null);
      this.stderr.push(null);
    });
    stream.on('error', () => {});
    stream.once('close', () => {
      settle?.reject(new Error('the device closed the session'));
      if (!stream.readableEnded) {
        // Reset, or the tunnel went: nothing more comes.
        this.stdout.destroy();
        this.stderr.destroy();
        this.finish();
      }
    });
  }

  private deliver(output: Readable, payload: Buffer): void {
    if (!output.push(payload)) {
      this.full.add(output);
      this.stream.pause();
    }
  }

  private received(
    message: ReceivedMessage,
    settle: { resolve(): void; reject(error: Error): void } | undefined,
  ) {
    if (!this.isOpen && message.type !== Message.opened && message.type !== Message.refused) {
      throw new SessionProtocolError(`message ${message.type} before the session opened`);
    }
    switch (message.type) {
      case Message.stdout:
        this.deliver(this.stdout, message.payload);
        return;
      case Message.stderr:
        this.deliver(this.stderr, message.payload);
        return;
      case Message.opened:
        this.isOpen = true;
        settle?.resolve();
        return;
      case Message.refused:
        settle?.reject(new Error(String(readJson(message.payload)['message'] ?? 'refused').slice(0, 200)));
        return;
      case Message.exit: {
        const exit = exitStatus(readJson(message.payload));
        if (this.exit || !exit) return;
        this.exit = exit;
        for (const listener of this.exitListeners) listener(exit);
        return;
      }
      default:
        throw new SessionProtocolError(`message ${message.type} does not belong in a session's output`);
    }
  }

  resize(size: TerminalSize): void {
    this.control(Message.resize, size);
  }

  signal(name: string): void {
    if (SIGNALS.has(name)) this.control(Message.signal, { name });
  }

  onExit(listener: (exit: ExitStatus) => void): void {
    if (this.exit) listener(this.exit);
    else this.exitListeners.push(listener);
  }

  onClose(listener: () => void): void {
    if (this.closed) queueMicrotask(listener);
    else this.closeListeners.push(listener);
  }

  close(): void {
    this.stream.destroy();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    if (!this.stream.destroyed) this.stream.destroy();
    for (const listener of this.closeListeners) listener();
  }

  private control(type: typeof Message.resize | typeof Message.signal, body: object): void {
    if (!this.stream.destroyed && !this.stream.writableEnded) this.stream.write(controlMessage(type, body));
  }

  /** Stdin as data messages, header and payload corked together so the tunnel frames them in one copy. */
  private send(chunks: Buffer[], done: (error?: Error | null) => void): void {
    const { stream } = this;
    if (stream.destroyed || stream.writableEnded) {
      done();
      return;
    }
    const parts = chunks.flatMap((chunk) => dataMessages(Message.stdin, chunk));
    if (parts.length === 0) {
      done();
      return;
    }
    stream.cork();
    parts.forEach((part, i) => {
      if (i === parts.length - 1) stream.write(part, () => done());
      else stream.write(part);
    });
    stream.uncork();
  }
}

/**
 * The exit status a device reports, as SSH can pass it on: a u32 code, or a signal by an SSH name (RFC 4254
 * section 6.10; ssh2 throws on any other). A program ended by another signal (SIGBUS) is reported as KILL; a code
 * that is no u32 is not reported, as when a session ends without a status.
 */
function exitStatus(body: Record<string, unknown>): ExitStatus | undefined {
  const { code, signal, description } = body;
  if (typeof code === 'number') {
    return Number.isInteger(code) && code >= 0 && code <= 0xffffffff ? { code } : undefined;
  }
  return {
    signal: typeof signal === 'string' && SIGNALS.has(signal) ? signal : 'KILL',
    core: body['core'] === true,
    description: typeof description === 'string' ? description.slice(0, 256) : '',
  };
}
