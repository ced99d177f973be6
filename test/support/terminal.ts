import { spawn as spawnPty } from '@lydell/node-pty';

/** OpenSSH in a real terminal (node-pty), so it asks for a PTY and passes window changes as a person's would. */
export class Terminal {
  output = '';
  private readonly term;
  readonly exited: Promise<number>;

  constructor(args: string[], size: { cols: number; rows: number }) {
    this.term = spawnPty('ssh', args, {
      name: 'xterm',
      cols: size.cols,
      rows: size.rows,
      env: { ...process.env } as Record<string, string>,
    });
    this.term.onData((d) => {
      this.output += d;
    });
    this.exited = new Promise((resolve) => this.term.onExit((e) => resolve(e.exitCode)));
  }

  async waitFor(pattern: RegExp, from = 0, timeoutMs = 15_000): Promise<void> {
    const started = Date.now();
    while (!pattern.test(this.output.slice(from))) {
      if (Date.now() - started > timeoutMs)
        throw new Error(`never saw ${pattern}; saw ${JSON.stringify(this.output)}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  type(text: string): void {
    this.term.write(text);
  }

  resize(cols: number, rows: number): void {
    this.term.resize(cols, rows);
  }
}
