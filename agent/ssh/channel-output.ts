import type { Readable } from 'node:stream';
import type { ServerChannel } from 'ssh2';

const PAUSE_ABOVE = 2 * 1024 * 1024;
const RESUME_BELOW = 512 * 1024;

/**
 * Feeds a program's stdout and stderr into one SSH channel, one write at a time.
 *
 * ssh2's channel keeps a single "waiting for window" slot for the channel and its stderr:
 * when both have a write blocked on the peer's window, one of them is never resumed and
 * the session stalls. Writing strictly in turn avoids that and also keeps the order in
 * which the program wrote. The program is paused while too much waits here.
 */
export class ChannelOutput {
  private readonly channel: ServerChannel;
  private readonly sources: Readable[];
  private readonly queue: Array<{ stderr: boolean; chunk: Buffer }> = [];
  private queuedBytes = 0;
  private writing = false;
  private paused = false;
  private drainedWaiters: Array<() => void> = [];

  constructor(channel: ServerChannel, sources: Readable[]) {
    this.channel = channel;
    this.sources = sources;
  }

  push(stderr: boolean, chunk: Buffer): void {
    this.queue.push({ stderr, chunk });
    this.queuedBytes += chunk.length;
    if (!this.paused && this.queuedBytes > PAUSE_ABOVE) {
      this.paused = true;
      for (const source of this.sources) source.pause();
    }
    this.writeNext();
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
    const next = this.queue.shift();
    if (!next) {
      for (const resolve of this.drainedWaiters.splice(0)) resolve();
      return;
    }
    this.writing = true;
    const target = next.stderr ? this.channel.stderr : this.channel;
    target.write(next.chunk, () => {
      this.writing = false;
      this.queuedBytes -= next.chunk.length;
      if (this.paused && this.queuedBytes < RESUME_BELOW) {
        this.paused = false;
        for (const source of this.sources) source.resume();
      }
      this.writeNext();
    });
  }
}
