import { spawn as spawnPty } from '@lydell/node-pty';

const ESC = String.fromCharCode(27);

/** OpenSSH in a real terminal (node-pty), so it asks for a PTY and passes window changes as a person's would. */
export class Terminal {
  output = '';
  private answered = 0;
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
      // A terminal answers a cursor-position query (DSR, ESC[6n) with ESC[row;colR; busybox's ash asks before it
      // draws its prompt and waits for the answer. The column is where the last line's text ends.
      const asked = this.output.split(`${ESC}[6n`).length - 1;
      if (asked > this.answered) {
        this.answered = asked;
        const lastLine = this.output.split(/\r?\n/).pop() ?? '';
        const visible = lastLine.replace(new RegExp(`${ESC}\\[[0-9;?]*[A-Za-z]`, 'g'), '');
        this.term.write(`${ESC}[1;${visible.length + 1}R`);
      }
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

  /**
   * Waits until the far side has drawn nothing for `quietMs`: a shell that redraws its prompt (on a window change
   * or a cursor-position answer) reads keys typed meanwhile as part of that exchange, as it would a person's.
   */
  async settle(quietMs = 500, timeoutMs = 15_000): Promise<void> {
    const started = Date.now();
    let seen = this.output.length;
    let since = Date.now();
    while (Date.now() - since < quietMs) {
      if (Date.now() - started > timeoutMs)
        throw new Error(`never quiet; saw ${JSON.stringify(this.output)}`);
      await new Promise((r) => setTimeout(r, 25));
      if (this.output.length !== seen) {
        seen = this.output.length;
        since = Date.now();
      }
    }
  }

  type(text: string): void {
    this.term.write(text);
  }

  resize(cols: number, rows: number): void {
    this.term.resize(cols, rows);
  }
}
