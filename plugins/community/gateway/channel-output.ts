import type { Readable } from 'node:stream';
import type { ServerChannel } from 'ssh2';

/** Bytes in flight to the user before the device side is paused. */
const HIGH_WATER = 2 * 1024 * 1024;
const LOW_WATER = 512 * 1024;

/**
 * Writes a device channel's stdout and stderr to the user's channel. ssh2's server channel shares one send window
 * between the two streams but remembers only one of them as waiting for it: a stderr write that queues behind
 * stdout is never resumed and the session hangs (seen with megabytes of both). So a stream is written only while
 * the other has nothing pending, which also keeps the order in which the device wrote them, and the device side is
 * paused while too much is in flight.
 */
export class ChannelOutput {
  private readonly queue: { err: boolean; chunk: Buffer }[] = [];
  private readonly pending = { out: 0, err: 0 };
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
    while (this.queue.length) {
      const head = this.queue[0] as { err: boolean; chunk: Buffer };
      if (head.err ? this.pending.out > 0 : this.pending.err > 0) return;
      this.queue.shift();
      const key = head.err ? 'err' : 'out';
      this.pending[key]++;
      const target = head.err ? this.down.stderr : this.down;
      target.write(head.chunk, () => {
        this.pending[key]--;
        this.bytes -= head.chunk.length;
        if (this.paused && this.bytes < LOW_WATER) {
          this.paused = false;
          for (const s of this.sources) s.resume();
        }
        this.pump();
      });
    }
    if (this.pending.out === 0 && this.pending.err === 0) {
      for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  /** Resolves when everything pushed has been handed to SSH (or the channel went away). */
  idle(): Promise<void> {
    if (!this.queue.length && this.pending.out === 0 && this.pending.err === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.idleWaiters.push(resolve);
      this.down.once('close', resolve);
    });
  }
}
