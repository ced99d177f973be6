import type { Duplex, Readable, Writable } from 'node:stream';

/**
 * Where a session's program talks: its input is what the channel reads, its output what the channel is written,
 * its errors `stderr`, and `exit` reports how it ended before the channel ends. An ssh2 server channel is one; so
 * is a session of the session protocol (the agent's session-protocol server).
 */
export interface SessionChannel extends Duplex {
  readonly stderr: Writable;
  exit(code: number): void;
  exit(signal: string, coreDumped: boolean, description: string): void;
}

/** Bytes waiting for the peer before the sources are paused, and below which they resume. */
const PAUSE_ABOVE = 2 * 1024 * 1024;
const RESUME_BELOW = 512 * 1024;
/**
 * Consecutive small chunks of one stream (a terminal's output, a few bytes at a time) are joined into writes of at
 * most one SSH packet; larger chunks go as they are, since joining them only copies bytes that ssh2 splits into
 * packets anyway, and every such copy is an allocation that brings V8's next major collection closer (one per
 * 64 MB allocated).
 */
const MAX_WRITE = 32 * 1024;
const SMALL_CHUNK = 8 * 1024;

/**
 * ssh2's bookkeeping of a write that waits for the peer's window (ssh2 1.x lib/Channel.js and the
 * CHANNEL_WINDOW_ADJUST handlers in lib/server.js and lib/client.js; not part of its API).
 */
interface WindowWait {
  _waitWindow?: boolean;
  _chunk?: Buffer;
  _chunkcb?: () => void;
  _chunkErr?: Buffer;
  _chunkcbErr?: () => void;
}

/**
 * Feeds stdout and stderr into one ssh2 server channel: the agent's sessions (a program's two pipes) and the
 * gateway's bridge (the device channel's two streams towards the user) both write through this.
 *
 * ssh2's server channel shares one send window between stdout and stderr and keeps a write that waits for the
 * window in one set of fields (`_chunk`/`_chunkcb` for stdout, `_chunkErr`/`_chunkcbErr` for stderr). When the
 * window opens it resumes whichever of those is set, stdout first, and it never clears them after the resumed write
 * completes. Two failures follow:
 * - both streams waiting at once: only one is resumed, the other never is (the session stalls);
 * - stdout waited once and completed, stderr waits later: the window handler finds the stale stdout remainder and
 *   sends it again (duplicated stdout bytes), calling its spent callback, and stderr is never resumed (the client
 *   eventually gives up with exit 255).
 * So exactly one write is in flight at a time, across both streams, and when its callback runs (nothing else can
 * be waiting then) the stale fields are cleared. One write at a time also keeps the order in which the two streams
 * were written. Consecutive chunks of the same stream are joined so throughput does not suffer, and the sources
 * are paused while too much waits here.
 */
export class ChannelOutput {
  private readonly channel: SessionChannel;
  private readonly sources: Readable[];
  private readonly queue: Array<{ stderr: boolean; chunk: Buffer }> = [];
  private queuedBytes = 0;
  private writing = false;
  private paused = false;
  /** Holds other consumers of the same output keep on the sources (a recording the store has not caught up with). */
  private holds = 0;
  private drainedWaiters: Array<() => void> = [];

  constructor(channel: SessionChannel, sources: Readable[]) {
    this.channel = channel;
    this.sources = sources;
  }

  /** Queues `chunk` for the channel's stdout, or its stderr when `stderr` is true. */
  push(stderr: boolean, chunk: Buffer | string): void {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (bytes.length === 0) return;
    this.queue.push({ stderr, chunk: bytes });
    this.queuedBytes += bytes.length;
    if (!this.paused && this.queuedBytes > PAUSE_ABOVE) {
      this.paused = true;
      this.flow();
    }
    this.writeNext();
  }

  /**
   * Pauses the sources until the returned release is called, whatever the channel's own backpressure says: for
   * another consumer of the same output that fell behind. Calling a release twice does nothing.
   */
  hold(): () => void {
    this.holds++;
    this.flow();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holds--;
      this.flow();
    };
  }

  /** Pauses or resumes the sources: paused while too much waits here or anyone holds them. */
  private flow(): void {
    const pause = this.paused || this.holds > 0;
    for (const source of this.sources) {
      if (pause) source.pause();
      else source.resume();
    }
  }

  /** Resolves once everything pushed is handed to SSH, or the channel is gone. */
  drained(): Promise<void> {
    if (!this.writing && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.drainedWaiters.push(resolve);
      this.channel.once('close', resolve);
    });
  }

  private writeNext(): void {
    if (this.writing) return;
    const head = this.queue.shift();
    if (!head) {
      for (const resolve of this.drainedWaiters.splice(0)) resolve();
      return;
    }
    const parts = [head.chunk];
    let size = head.chunk.length;
    const small = (chunk: Buffer) => chunk.length < SMALL_CHUNK;
    for (let next = this.queue[0]; next && small(head.chunk); next = this.queue[0]) {
      if (next.stderr !== head.stderr || !small(next.chunk) || size + next.chunk.length > MAX_WRITE) break;
      this.queue.shift();
      parts.push(next.chunk);
      size += next.chunk.length;
    }
    this.writing = true;
    const target = head.stderr ? this.channel.stderr : this.channel;
    target.write(parts.length === 1 ? head.chunk : Buffer.concat(parts, size), () => {
      this.writing = false;
      forgetFinishedWindowWait(this.channel);
      this.queuedBytes -= size;
      if (this.paused && this.queuedBytes < RESUME_BELOW) {
        this.paused = false;
        this.flow();
      }
      this.writeNext();
    });
  }
}

/**
 * Clears ssh2's record of a window-blocked write once that write has completed, so a later window adjustment
 * cannot resend it. Only call it when no write of this channel is in flight.
 */
export function forgetFinishedWindowWait(channel: SessionChannel): void {
  const wait = channel as unknown as WindowWait;
  if (wait._waitWindow) return;
  wait._chunk = undefined;
  wait._chunkcb = undefined;
  wait._chunkErr = undefined;
  wait._chunkcbErr = undefined;
}
