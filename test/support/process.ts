import { type ChildProcess, execFile, spawn } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const gatehouseBin = path.resolve('bin/gatehouse.js');

/** What a `gatehouse` command printed and how it exited. */
export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `gatehouse <args>` as a user does, in its own process. */
export async function gatehouse(env: NodeJS.ProcessEnv, ...args: string[]): Promise<CommandResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, [gatehouseBin, ...args], { env, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/**
 * `gatehouse serve` (what `npm start` runs) in its own process, on loopback ports it picks itself, with the given
 * environment. Resolves once it listens, with its URL and the setup link it printed (if it printed one).
 */
export class ServerProcess {
  url = '';
  setupLink = '';
  output = '';
  private constructor(readonly child: ChildProcess) {}

  static async start(env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<ServerProcess> {
    const child = spawn(process.execPath, [gatehouseBin, 'serve'], {
      env: {
        GATEHOUSE_HTTP_PORT: '0',
        GATEHOUSE_HTTP_HOST: '127.0.0.1',
        GATEHOUSE_SSH_PORT: '0',
        GATEHOUSE_SSH_HOST: '127.0.0.1',
        GATEHOUSE_LOG_LEVEL: 'info',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const server = new ServerProcess(child);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`gatehouse serve did not start:\n${server.output}`));
      }, timeoutMs);
      const onData = (chunk: Buffer) => {
        server.output += chunk.toString();
        for (const line of server.output.split('\n')) {
          const link = /(\S+\/setup\?sign=\S+)/.exec(line);
          if (link?.[1]) server.setupLink = link[1];
          if (!server.url && line.startsWith('{')) {
            try {
              const entry = JSON.parse(line) as { msg?: string; url?: string };
              if (entry.msg === 'listening' && entry.url) server.url = entry.url;
            } catch {
              // not a log line
            }
          }
        }
        // The "ready" line comes after the setup link, so both are known once it is seen.
        if (server.url && /"msg":"ready"/.test(server.output)) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`gatehouse serve exited with ${code}:\n${server.output}`));
      });
    });
    child.removeAllListeners('exit');
    return server;
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  async api(method: string, p: string, opts: { body?: unknown; token?: string } = {}) {
    const headers: Record<string, string> = {};
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(this.url + p, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    });
    const text = await res.text();
    let body: any = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // keep the text
    }
    return { status: res.status, body };
  }

  /** Sends a signal and waits for the process to end. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill(signal);
    await exited;
  }
}
