import { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';
import {
  encodeFrame,
  encodeU32Frame,
  type Frame,
  FrameDecoder,
  FrameType,
  HEADER_SIZE,
  MAX_CONTROL_PAYLOAD,
  MAX_DATA_PAYLOAD,
  ProtocolError,
} from './frame';
import { MuxStream, type StreamCarrier } from './stream';

/**
 * What a stream is for, sent by the opener before any byte of the stream: an SSH connection to the agent's own
 * server (`ssh`), a connection on the device's network (`tcp`, for HTTP tunnels), or the session protocol
 * (agent/session-protocol/): a signed-in `connection`, a `session` of it, a `direct` connection of it (`ssh -L`, `-D`),
 * or the `pickup` of a connection waiting on the device (`ssh -R`, the forwarded ssh-agent). A connector serves
 * one kind only: `engine`, a connection to the container engine beside it (the one its own configuration names).
 */
export type StreamHeader =
  | { kind: 'ssh' }
  | { kind: 'tcp'; host: string; port: number }
  | { kind: 'connection' }
  | { kind: 'session'; conn: string }
  | { kind: 'direct'; conn: string; host: string; port: number; srcIP: string; srcPort: number }
  | { kind: 'pickup'; conn: string; ref: number }
  | { kind: 'engine' };

/** The stream kinds of the session protocol; an agent that serves them says so when it opens its tunnel. */
export const SESSION_STREAM_KINDS = ['connection', 'session', 'direct', 'pickup'] as const;

const CONNECTION_ID = /^[0-9a-f]{32}$/;

function isHost(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= 255;
}

function isPort(value: unknown, min = 1): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= 65535;
}

/** The message-carrying connection under a session (a WebSocket in production). */
export interface FrameTransport {
  send(frame: Buffer, sent: (error?: Error) => void): void;
  /**
   * Sends one frame given in pieces without joining them (the server end: as fragments of one WebSocket message,
   * which the agent's ws joins). Without it, the pieces are copied into one frame.
   */
  sendPieces?(pieces: Buffer[], sent: (error?: Error) => void): void;
  /** Bytes accepted by `send` but not yet handed to the operating system. */
  bufferedAmount(): number;
  close(code: number, reason: string): void;
}

export type StreamHandler = (header: StreamHeader, stream: Duplex) => void | Promise<void>;

export interface MuxSessionOptions {
  /** The opener (server) opens streams; the acceptor (agent) serves them. */
  role: 'opener' | 'acceptor';
  onStream?: StreamHandler;
  /** How long `open` and `ping` wait for the peer. */
  timeoutMs?: number;
  /** Largest data frame to send; by default MAX_DATA_PAYLOAD. */
  maxDataFrame?: number;
}

/**
 * Data frame buffers kept for reuse, at most. Where data is joined into frames (the agent's end), every frame was a
 * new buffer: as much new memory as the data moved, which started one of V8's major collections for every few
 * tens of megabytes (bench/RESULTS.md). The transport's own limit (TRANSPORT_HIGH_WATER, 64 frames of the agent's
 * 16 KiB) bounds how many are in flight at once.
 */
const SPARE_FRAMES = 64;
/**
 * Only frames of at least this much data use those buffers. A small one (a keystroke's echo, a message of the
 * session protocol) would take a whole frame-sized buffer: an interactive session's agent kept 16 KiB per tunnel
 * for a few bytes, and a process holding many tunnels (the fleet benchmark's load tool) that much per tunnel. Small
 * frames come from Node's shared pool of small buffers instead.
 */
const POOLED_FRAME_MIN = 4096;
/** A data frame whose pieces average less than this is joined into one buffer, not sent as message fragments. */
const MIN_FRAGMENT_AVERAGE = 4096;
/** Past this many queued bytes in the transport, stream writes wait. */
const TRANSPORT_HIGH_WATER = 1024 * 1024;
const TRANSPORT_LOW_WATER = 256 * 1024;

interface PendingOpen {
  stream: MuxStream;
  resolve: (stream: Duplex) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

interface PendingPing {
  startedAt: number;
  resolve: (rttMs: number) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

export function parseStreamHeader(payload: Buffer): StreamHeader | undefined {
  let value: unknown;
  try {
    value = JSON.parse(payload.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const header = value as Record<string, unknown>;
  const { kind, host, port, conn } = header;
  if (kind === 'ssh') return { kind: 'ssh' };
  if (kind === 'connection') return { kind: 'connection' };
  if (kind === 'engine') return { kind: 'engine' };
  if (kind === 'tcp') return isHost(host) && isPort(port) ? { kind: 'tcp', host, port } : undefined;
  if (typeof conn !== 'string' || !CONNECTION_ID.test(conn)) return undefined;
  if (kind === 'session') return { kind: 'session', conn };
  if (kind === 'direct') {
    const { srcIP, srcPort } = header;
    if (!isHost(host) || !isPort(port) || typeof srcIP !== 'string' || srcIP.length > 255) return undefined;
    if (!isPort(srcPort, 0)) return undefined;
    return { kind: 'direct', conn, host, port, srcIP, srcPort };
  }
  if (kind === 'pickup') {
    const { ref } = header;
    if (typeof ref !== 'number' || !Number.isInteger(ref) || ref < 1 || ref > 2 ** 31) return undefined;
    return { kind: 'pickup', conn, ref };
  }
  return undefined;
}

/**
 * One tunnel: many streams over one transport. Both ends use this class; the server
 * side is the opener, the agent the acceptor. A protocol violation by the peer closes
 * this session (and its transport) and nothing else.
 *
 * Events: `close` (error?: Error) once, `protocolError` (error) before a close it causes.
 */
export class MuxSession extends EventEmitter implements StreamCarrier {
  private readonly transport: FrameTransport;
  private readonly role: 'opener' | 'acceptor';
  private readonly onStream: StreamHandler | undefined;
  private readonly timeoutMs: number;
  readonly maxDataFrame: number;
  /** Data frame buffers the transport has written, for the next frames (SPARE_FRAMES). */
  private readonly spareFrames: Buffer[] = [];
  private readonly decoder = new FrameDecoder();
  private readonly streams = new Map<number, MuxStream>();
  private readonly pendingOpens = new Map<number, PendingOpen>();
  private readonly pendingPings = new Map<number, PendingPing>();
  private writableWaiters: Array<() => void> = [];
  private nextStreamId = 1;
  private highestRemoteStreamId = 0;
  private nextPingNonce = 1;
  private isClosed = false;
  /** performance.now() of the last frame from the peer; agents use it to spot a dead server. */
  lastReceivedAt = performance.now();

  constructor(transport: FrameTransport, options: MuxSessionOptions) {
    super();
    this.transport = transport;
    this.role = options.role;
    this.onStream = options.onStream;
    this.timeoutMs = options.timeoutMs ?? 15_000;
    this.maxDataFrame = Math.min(options.maxDataFrame ?? MAX_DATA_PAYLOAD, MAX_DATA_PAYLOAD);
  }

  get closed(): boolean {
    return this.isClosed;
  }

  get streamCount(): number {
    return this.streams.size;
  }

  /** Opens a stream; resolves once the peer has accepted it. */
  open(header: StreamHeader): Promise<Duplex> {
    if (this.role !== 'opener') return Promise.reject(new Error('only the server end opens streams'));
    if (this.isClosed) return Promise.reject(new Error('tunnel closed'));
    const streamId = this.nextStreamId;
    this.nextStreamId += 2;
    const stream = new MuxStream(this, streamId, false);
    // Until open resolves nobody outside holds the stream: a refusal or timeout
    // rejects the promise, and the stream's own error must not go unhandled.
    stream.on('error', ignoreError);
    this.streams.set(streamId, stream);
    return new Promise<Duplex>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pendingOpens.delete(streamId);
        stream.destroy(new Error('stream open timed out'));
        reject(new Error('stream open timed out'));
      }, this.timeoutMs);
      timer.unref();
      this.pendingOpens.set(streamId, { stream, resolve, reject, timer });
      this.sendFrame(encodeFrame(FrameType.open, streamId, Buffer.from(JSON.stringify(header))));
    });
  }

  /** Round-trip time to the peer in milliseconds. */
  ping(): Promise<number> {
    if (this.isClosed) return Promise.reject(new Error('tunnel closed'));
    const nonce = this.nextPingNonce++ >>> 0;
    return new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pendingPings.delete(nonce);
        reject(new Error('ping timed out'));
      }, this.timeoutMs);
      timer.unref();
      this.pendingPings.set(nonce, { startedAt: performance.now(), resolve, reject, timer });
      this.sendFrame(encodeU32Frame(FrameType.ping, 0, nonce));
    });
  }

  close(): void {
    if (this.isClosed) return;
    this.transport.close(1000, 'tunnel closed');
    this.shutdown(undefined);
  }

  /** Feed bytes that arrived from the peer. */
  receive(chunk: Buffer): void {
    if (this.isClosed) return;
    this.lastReceivedAt = performance.now();
    try {
      for (const frame of this.decoder.push(chunk)) {
        this.handleFrame(frame);
        if (this.isClosed) return;
      }
    } catch (error) {
      if (!(error instanceof ProtocolError)) throw error;
      this.failProtocol(error);
    }
  }

  /** The transport went away (closed by the peer or the network). */
  transportClosed(error?: Error): void {
    this.shutdown(error ?? new Error('tunnel closed'));
  }

  /** Closes the session because the peer broke the protocol. */
  failProtocol(error: ProtocolError): void {
    if (this.isClosed) return;
    this.emit('protocolError', error);
    this.transport.close(1002, error.message.slice(0, 120));
    this.shutdown(error);
  }

  private handleFrame(frame: Frame): void {
    const { streamId, payload } = frame;
    switch (frame.type) {
      case FrameType.open:
        this.handleOpen(streamId, payload);
        return;
      case FrameType.openOk: {
        if (this.role !== 'opener') throw new ProtocolError('open-ok sent to the acceptor');
        const pending = this.pendingOpens.get(streamId);
        if (!pending) {
          this.requireKnown(streamId);
          return;
        }
        clearTimeout(pending.timer);
        this.pendingOpens.delete(streamId);
        pending.stream.off('error', ignoreError);
        pending.stream.markReady();
        pending.resolve(pending.stream);
        return;
      }
      case FrameType.data: {
        const stream = this.streams.get(streamId);
        if (!stream) {
          this.requireKnown(streamId);
          return;
        }
        if (this.pendingOpens.has(streamId)) throw new ProtocolError(`data before open-ok on ${streamId}`);
        stream.receiveData(payload);
        return;
      }
      case FrameType.window: {
        const credit = readU32(payload);
        const stream = this.streams.get(streamId);
        if (!stream) {
          this.requireKnown(streamId);
          return;
        }
        stream.receiveWindow(credit);
        return;
      }
      case FrameType.fin: {
        const stream = this.streams.get(streamId);
        if (!stream) {
          this.requireKnown(streamId);
          return;
        }
        stream.receiveFin();
        return;
      }
      case FrameType.reset: {
        const reason = payload.toString('utf8');
        const pending = this.pendingOpens.get(streamId);
        if (pending) {
          clearTimeout(pending.timer);
          this.pendingOpens.delete(streamId);
          pending.reject(new Error(reason || 'stream refused'));
        }
        const stream = this.streams.get(streamId);
        if (!stream) {
          this.requireKnown(streamId);
          return;
        }
        stream.receiveReset(reason);
        return;
      }
      case FrameType.ping:
        readU32(payload);
        this.sendFrame(encodeFrame(FrameType.pong, 0, payload));
        return;
      case FrameType.pong: {
        const nonce = readU32(payload);
        const pending = this.pendingPings.get(nonce);
        if (!pending) return;
        clearTimeout(pending.timer);
        this.pendingPings.delete(nonce);
        pending.resolve(performance.now() - pending.startedAt);
        return;
      }
    }
  }

  private handleOpen(streamId: number, payload: Buffer): void {
    if (this.role !== 'acceptor') throw new ProtocolError('the agent end may not open streams');
    if (streamId % 2 !== 1 || streamId <= this.highestRemoteStreamId) {
      throw new ProtocolError(`stream id ${streamId} is not new`);
    }
    this.highestRemoteStreamId = streamId;
    const header = parseStreamHeader(payload);
    if (!header) throw new ProtocolError('malformed stream header');
    const stream = new MuxStream(this, streamId, false);
    this.streams.set(streamId, stream);
    const handler = this.onStream;
    if (!handler) {
      stream.destroy(new Error('no stream handler'));
      return;
    }
    Promise.resolve()
      .then(() => handler(header, stream))
      .then(
        () => {
          if (stream.destroyed || this.isClosed) return;
          this.sendFrame(encodeFrame(FrameType.openOk, streamId));
          stream.markReady();
        },
        (error: unknown) => {
          // The reason travels to the opener in the reset frame; nobody here listens.
          stream.on('error', () => {});
          stream.destroy(error instanceof Error ? error : new Error(String(error)));
        },
      );
  }

  /** A frame for a stream we no longer hold is fine if the stream once existed (a close race). */
  private requireKnown(streamId: number): void {
    const known =
      streamId % 2 === 1 &&
      (this.role === 'opener' ? streamId < this.nextStreamId : streamId <= this.highestRemoteStreamId);
    if (!known) throw new ProtocolError(`frame for unknown stream ${streamId}`);
  }

  private sendFrame(frame: Buffer): void {
    if (this.isClosed) return;
    this.transport.send(frame, this.onSent);
  }

  private readonly onSent = (error?: Error): void => {
    if (error) {
      this.shutdown(error);
      return;
    }
    if (this.writableWaiters.length > 0 && this.transport.bufferedAmount() < TRANSPORT_LOW_WATER) {
      const waiters = this.writableWaiters;
      this.writableWaiters = [];
      for (const done of waiters) done();
    }
  };

  private shutdown(error: Error | undefined): void {
    if (this.isClosed) return;
    this.isClosed = true;
    const reason = error ?? new Error('tunnel closed');
    for (const pending of this.pendingOpens.values()) {
      clearTimeout(pending.timer);
      pending.reject(reason);
    }
    this.pendingOpens.clear();
    for (const pending of this.pendingPings.values()) {
      clearTimeout(pending.timer);
      pending.reject(reason);
    }
    this.pendingPings.clear();
    for (const stream of [...this.streams.values()]) stream.destroy(reason);
    this.streams.clear();
    this.writableWaiters = [];
    this.emit('close', error);
  }

  // StreamCarrier: what streams ask of their session.

  sendData(streamId: number, chunk: Buffer | Buffer[]): void {
    if (this.isClosed) return;
    const pieces = Array.isArray(chunk) ? chunk : [chunk];
    let length = 0;
    for (const piece of pieces) length += piece.length;
    // Fragments pay off for large pieces (a message header and its payload); many small ones (a burst of control
    // messages, thousands to a frame) are far cheaper joined than framed one by one, on both ends.
    if (this.transport.sendPieces && length >= pieces.length * MIN_FRAGMENT_AVERAGE) {
      // Only the 9-byte header is new memory (from Node's small-buffer pool): the payload goes out as it is.
      const header = Buffer.allocUnsafe(HEADER_SIZE);
      header.writeUInt8(FrameType.data, 0);
      header.writeUInt32BE(streamId >>> 0, 1);
      header.writeUInt32BE(length, 5);
      this.transport.sendPieces([header, ...pieces], this.onSent);
      return;
    }
    if (this.transport.sendPieces || length > this.maxDataFrame) {
      this.sendFrame(encodeFrame(FrameType.data, streamId, chunk));
      return;
    }
    // The end that joins (the agent's, with small frames): a large frame into a frame buffer of the pool, which goes
    // back to it once the transport has written it; a small one into a buffer of its own size.
    const pooled = length >= POOLED_FRAME_MIN;
    const buffer = pooled
      ? (this.spareFrames.pop() ?? Buffer.allocUnsafeSlow(HEADER_SIZE + this.maxDataFrame))
      : Buffer.allocUnsafe(HEADER_SIZE + length);
    buffer.writeUInt8(FrameType.data, 0);
    buffer.writeUInt32BE(streamId >>> 0, 1);
    buffer.writeUInt32BE(length, 5);
    let offset = HEADER_SIZE;
    for (const piece of pieces) {
      piece.copy(buffer, offset);
      offset += piece.length;
    }
    this.transport.send(buffer.subarray(0, offset), (error) => {
      if (pooled && !error && this.spareFrames.length < SPARE_FRAMES) this.spareFrames.push(buffer);
      this.onSent(error);
    });
  }

  sendWindow(streamId: number, credit: number): void {
    this.sendFrame(encodeU32Frame(FrameType.window, streamId, credit));
  }

  sendFin(streamId: number): void {
    this.sendFrame(encodeFrame(FrameType.fin, streamId));
  }

  sendReset(streamId: number, reason: string): void {
    const bytes = Buffer.from(reason, 'utf8').subarray(0, MAX_CONTROL_PAYLOAD);
    this.sendFrame(encodeFrame(FrameType.reset, streamId, bytes));
  }

  whenWritable(done: () => void): void {
    if (this.isClosed || this.transport.bufferedAmount() < TRANSPORT_HIGH_WATER) done();
    else this.writableWaiters.push(done);
  }

  forget(streamId: number): void {
    this.streams.delete(streamId);
    const pending = this.pendingOpens.get(streamId);
    if (pending) {
      clearTimeout(pending.timer);
      this.pendingOpens.delete(streamId);
      pending.reject(new Error('stream closed before it opened'));
    }
  }
}

function ignoreError(): void {}

function readU32(payload: Buffer): number {
  if (payload.length !== 4) throw new ProtocolError('control frame needs a 4-byte value');
  return payload.readUInt32BE(0);
}
