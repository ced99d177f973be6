import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const AGENT_MAIN = fileURLToPath(new URL('../../../agent/main.ts', import.meta.url));

/** The real agent program (agent/main.ts through tsx) as a child process, with its log lines collected. */
export class AgentProcess {
  readonly child: ChildProcess;
  readonly lines: string[] = [];
  private readonly lineWaiters: Array<{ pattern: RegExp; resolve: (line: string) => void }> = [];
  readonly exited: Promise<number | null>;

  constructor(env: Record<string, string>, args: string[] = []) {
    this.child = spawn(process.execPath, ['--import', 'tsx', AGENT_MAIN, ...args], {
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.env['HOME'] ?? '/root', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let buffered = '';
    const onText = (text: string) => {
      buffered += text;
      const parts = buffered.split('\n');
      buffered = parts.pop() ?? '';
      for (const line of parts) {
        this.lines.push(line);
        if (process.env['AGENT_TEST_LOG']) process.stderr.write(`[agent] ${line}\n`);
        for (const waiter of [...this.lineWaiters]) {
          if (waiter.pattern.test(line)) {
            this.lineWaiters.splice(this.lineWaiters.indexOf(waiter), 1);
            waiter.resolve(line);
          }
        }
      }
    };
    this.child.stdout?.setEncoding('utf8').on('data', onText);
    this.child.stderr?.setEncoding('utf8').on('data', onText);
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
  }

  /** Resolves with the first log line (past or future) matching `pattern`. */
  waitFor(pattern: RegExp, timeoutMs = 30_000): Promise<string> {
    const seen = this.lines.find((line) => pattern.test(line));
    if (seen) return Promise.resolve(seen);
    return this.waitForNext(pattern, timeoutMs);
  }

  /** Waits for a line after those already seen; fails with the log so far when none comes in time. */
  waitForNext(pattern: RegExp, timeoutMs = 30_000): Promise<string> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const index = this.lineWaiters.findIndex((waiter) => waiter.pattern === pattern);
        if (index !== -1) this.lineWaiters.splice(index, 1);
        reject(new Error(`the agent never logged ${pattern}; its log:\n${this.lines.join('\n')}`));
      }, timeoutMs);
      this.lineWaiters.push({
        pattern,
        resolve: (line) => {
          clearTimeout(timer);
          resolve(line);
        },
      });
    });
  }

  /** The device uid the agent logged once the server answered its registration. */
  async uid(): Promise<string> {
    const line = await this.waitFor(/\b[0-9a-f]{64}\b/);
    const uid = /\b([0-9a-f]{64})\b/.exec(line)?.[1];
    if (!uid) throw new Error(`no device uid in "${line}"`);
    return uid;
  }

  /** SIGTERM and wait for the exit (SIGKILL after 5 s, so a stuck agent cannot hold the suite). */
  async stop(): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGTERM');
      const killer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
      const code = await this.exited;
      clearTimeout(killer);
      return code;
    }
    return this.exited;
  }
}
