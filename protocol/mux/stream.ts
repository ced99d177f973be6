import { Duplex } from 'node:stream';
import { INITIAL_WINDOW, MAX_WINDOW, ProtocolError } from './frame';

const EMPTY = Buffer.alloc(0);

/** What a stream needs from the session that carries it. */
export interface StreamCarrier {
  /** One data frame; a payload in pieces is joined into it. */
  sendData(streamId: number, chunk: Buffer | Buffer[]): void;
  sendWindow(streamId: number, credit: number): void;
  sendFin(streamId: number): void;
  sendReset(streamId: number, reason: string): void;
  /** Largest data frame this end sends (at most MAX_DATA_PAYLOAD, the most the peer accepts). */
  readonly maxDataFrame: number;
  /** Calls `done` once the transport has room again (at once when it has). */
  whenWritable(done: () => void): void;
  forget(streamId: number): void;
}

/** A write in progress: its pieces (one, or several from `writev`), and how far into them frames have gone. */
interface PendingWrite {
  parts: Buffer[];
  part: number;
  offset: number;
  callback: (error?: Error | null) => void;
}

/**
 * One multiplexed stream as a Node Duplex.
 *
 * Flow control: the peer may send at most `INITIAL_WINDOW` bytes before we grant more.
 * We grant credit only for bytes the reader has taken (pushed into the readable side
 * without it reporting full), so a slow reader stops the sender instead of growing our
 * memory. Writes wait for credit from the peer and for room in the shared transport.
 */
export class MuxStream extends Duplex {
  readonly streamId: number;
  private readonly carrier: StreamCarrier;
  private sendCredit = INITIAL_WINDOW;
  /** Bytes the peer may still send before we grant more. */
  private receiveAllowance = INITIAL_WINDOW;
  private unacknowledged = 0;
  /**
   * Received chunks not yet taken by the reader, from `inboxHead` on. Read by index, not `shift()`: a peer that sends
   * one tiny frame at a time to a reader that paused leaves tens of thousands here, and shifting a large array moves
   * all of it each time.
   */
  private inbox: Buffer[] = [];
  private inboxHead = 0;
  private readerWantsMore = false;
  private pendingWrite: PendingWrite | undefined;
  /** The acceptor holds its writes until it has told the opener the stream is ready. */
  private ready: boolean;
  private localFinSent = false;
  private remoteFinSeen = false;
  private resetSeen = false;

  constructor(carrier: StreamCarrier, streamId: number, ready: boolean) {
    super({ allowHalfOpen: true, readableHighWaterMark: 64 * 1024, writableHighWaterMark: 64 * 1024 });
    this.carrier = carrier;
    this.streamId = streamId;
    this.ready = ready;
  }

  /** The stream was accepted: writes may start. */
  markReady(): void {
    this.ready = true;
    this.emit('ready');
    this.pump();
  }

  receiveData(chunk: Buffer): void {
    if (this.remoteFinSeen) throw new ProtocolError(`data after end on stream ${this.streamId}`);
    if (chunk.length > this.receiveAllowance) {
      throw new ProtocolError(`stream ${this.streamId} overran its window`);
    }
    this.receiveAllowance -= chunk.length;
    if (this.destroyed) return;
    this.inbox.push(chunk);
    this.deliver();
  }

  receiveWindow(credit: number): void {
    if (this.sendCredit + credit > MAX_WINDOW) throw new ProtocolError(`window overflow on ${this.streamId}`);
    this.sendCredit += credit;
    this.pump();
  }

  receiveFin(): void {
    if (this.remoteFinSeen) throw new ProtocolError(`second end on stream ${this.streamId}`);
    this.remoteFinSeen = true;
    this.deliver();
  }

  receiveReset(reason: string): void {
    this.resetSeen = true;
    this.destroy(new Error(reason || 'stream reset by peer'));
  }

  override _read(): void {
    this.readerWantsMore = true;
    this.deliver();
  }

  private deliver(): void {
    const { inbox } = this;
    while (this.readerWantsMore && this.inboxHead < inbox.length) {
      const chunk = inbox[this.inboxHead]!;
      inbox[this.inboxHead++] = EMPTY;
      this.unacknowledged += chunk.length;
      if (!this.push(chunk)) this.readerWantsMore = false;
    }
    if (this.inboxHead === inbox.length) {
      inbox.length = 0;
      this.inboxHead = 0;
    } else if (this.inboxHead >= 1024 && this.inboxHead * 2 >= inbox.length) {
      this.inbox = inbox.slice(this.inboxHead);
      this.inboxHead = 0;
    }
    // Grant credit in large steps: one window frame per half window keeps the
    // control traffic small while the sender never stalls on a fast reader.
    if (this.unacknowledged >= INITIAL_WINDOW / 4 && !this.remoteFinSeen && !this.destroyed) {
      this.receiveAllowance += this.unacknowledged;
      this.carrier.sendWindow(this.streamId, this.unacknowledged);
      this.unacknowledged = 0;
    }
    if (this.remoteFinSeen && this.inboxHead === this.inbox.length && !this.readableEnded) this.push(null);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.pendingWrite = { parts: [chunk], part: 0, offset: 0, callback };
    this.pump();
  }

  /** Writes buffered together (a corked header and payload, say) share frames instead of one frame each. */
  override _writev(
    chunks: Array<{ chunk: Buffer; encoding: BufferEncoding }>,
    callback: (error?: Error | null) => void,
  ): void {
    this.pendingWrite = { parts: chunks.map((c) => c.chunk), part: 0, offset: 0, callback };
    this.pump();
  }

  private pump(): void {
    const write = this.pendingWrite;
    if (!write || !this.ready || this.destroyed) return;
    const { parts } = write;
    while (write.part < parts.length && this.sendCredit > 0) {
      // One frame: up to the credit and the frame limit, from as many pieces as it takes.
      let room = Math.min(this.sendCredit, this.carrier.maxDataFrame);
      const pieces: Buffer[] = [];
      while (room > 0 && write.part < parts.length) {
        const current = parts[write.part]!;
        const size = Math.min(current.length - write.offset, room);
        if (size > 0) pieces.push(current.subarray(write.offset, write.offset + size));
        write.offset += size;
        room -= size;
        this.sendCredit -= size;
        if (write.offset === current.length) {
          write.part++;
          write.offset = 0;
        }
      }
      if (pieces.length > 0) this.carrier.sendData(this.streamId, pieces.length === 1 ? pieces[0]! : pieces);
    }
    if (write.part === parts.length) {
      this.pendingWrite = undefined;
      this.carrier.whenWritable(() => write.callback());
    }
  }

  override _final(callback: (error?: Error | null) => void): void {
    const finish = () => {
      if (this.destroyed) return callback();
      this.localFinSent = true;
      this.carrier.sendFin(this.streamId);
      callback();
    };
    if (this.ready) finish();
    else this.once('ready', finish);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    const cleanlyClosed = this.localFinSent && this.remoteFinSeen;
    if (!cleanlyClosed && !this.resetSeen) this.carrier.sendReset(this.streamId, error?.message ?? 'closed');
    this.carrier.forget(this.streamId);
    this.inbox = [];
    this.inboxHead = 0;
    const write = this.pendingWrite;
    this.pendingWrite = undefined;
    if (write) write.callback(error ?? new Error('stream closed'));
    callback(error);
  }
}
