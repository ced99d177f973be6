import type { Readable } from 'node:stream';
import type { ServerChannel } from 'ssh2';

/** Bytes waiting for the user before the device side is paused; the most joined into one write. */
const HIGH_WATER = 2 * 1024 * 1024;
const LOW_WATER = 512 * 1024;
const MAX_WRITE = 1024 * 1024;

/** ssh2's bookkeeping of a write that waits for the peer's window (lib/Channel.js, not part of its API). */
interface WindowWait {
  _waitWindow?: boolean;
  _chunk?: Buffer;
  _chunkcb?: () => void;
  _chunkErr?: Buffer;
  _chunkcbErr?: () => void;
}

/**
 * Writes a device channel's stdout and stderr to the user's channel, one write at a time. ssh2's server channel
 * shares one send window between the two streams and remembers a write that waits for it in fields it never
 * clears afterwards: when stderr later waits for the window, ssh2 resends the stale stdout remainder instead and
 * stderr never resumes (seen as duplicated stdout bytes and a hung session with megabytes of both). With one
 * write in flight, no other write can have started when its callback runs, so the stale fields are cleared there.
 * One write at a time also keeps the order in which the device wrote the two streams; consecutive chunks of the
 * same stream are joined so the throughput does not suffer, and the device side is paused while too much waits.
 */
export class ChannelOutput {
  private readonly queue: { err: boolean; chunk: Buffer }[] = [];
  private inflight = false;
  private bytes = 0;
  private paused = false;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly down: ServerChannel,
    private readonly sources: Readable[],
  ) {}

  push(err: boolean, chunk: Buffer): void {
    this.queue.push({ err, chunk });
    this.bytes += chunk.length;
    if (this.bytes > HIGH_WATER && !this.paused) {
      this.paused = true;
      for (const s of this.sources) s.pause();
    }
    this.pump();
  }

  private pump(): void {
    if (this.inflight) return;
    const head = this.queue.shift();
    if (!head) {
      for (const w of this.idleWaiters.splice(0)) w();
      return;
    }
    const parts = [head.chunk];
    let size = head.chunk.length;
    while (this.queue[0]?.err === head.err && size + this.queue[0].chunk.length <= MAX_WRITE) {
      const next = this.queue.shift() as { chunk: Buffer };
      parts.push(next.chunk);
      size += next.chunk.length;
    }
    this.inflight = true;
    const target = head.err ? this.down.stderr : this.down;
    target.write(parts.length === 1 ? head.chunk : Buffer.concat(parts, size), () => {
      this.inflight = false;
      const wait = this.down as unknown as WindowWait;
      if (!wait._waitWindow) {
        wait._chunk = undefined;
        wait._chunkcb = undefined;
        wait._chunkErr = undefined;
        wait._chunkcbErr = undefined;
      }
      this.bytes -= size;
      if (this.paused && this.bytes < LOW_WATER) {
        this.paused = false;
        for (const s of this.sources) s.resume();
      }
      this.pump();
    });
  }

  /** Resolves when everything pushed has been handed to SSH (or the channel went away). */
  idle(): Promise<void> {
    if (!this.queue.length && !this.inflight) return Promise.resolve();
    return new Promise((resolve) => {
      this.idleWaiters.push(resolve);
      this.down.once('close', resolve);
    });
  }
}
