import type { Logger } from './log';

/** The background jobs plugins start in `boot` (`BootContext.every`): each runs on its timer until the server stops. */
export class Jobs {
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly running: Promise<void>[] = [];

  constructor(private readonly log: Logger) {}

  /** Runs `fn` every `seconds`; a run that fails is logged, never thrown, and the next one runs all the same. */
  every(seconds: number, name: string, fn: () => Promise<void>): void {
    const timer = setInterval(() => {
      const run = fn().catch((err: unknown) => this.log.error({ err, job: name }, 'job failed'));
      this.running.push(run);
      void run.finally(() => this.running.splice(this.running.indexOf(run), 1));
    }, seconds * 1000);
    timer.unref();
    this.timers.push(timer);
  }

  /** No new runs; waits for the ones under way. */
  async stop(): Promise<void> {
    for (const t of this.timers.splice(0)) clearInterval(t);
    await Promise.allSettled(this.running);
  }
}
