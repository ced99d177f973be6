import { spawn } from 'node:child_process';

/**
 * Milliseconds `cmd args` takes to exit (rejects on a non-zero exit, with the end of its stderr). With
 * `stdinBytes`, `head` feeds it that many zero bytes from its own process, piped straight in by the shell: pumping
 * them from this process would put the pump on the same event loop as the gateway measured (the server runs here).
 */
export function timed(cmd: string, args: string[], stdinBytes = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = stdinBytes
      ? spawn('sh', ['-c', 'head -c "$0" /dev/zero | "$@"', String(stdinBytes), cmd, ...args], {
          stdio: ['ignore', 'ignore', 'pipe'],
        })
      : spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr?.on('data', (c: Buffer) => {
      err += c.toString();
    });
    child.on('close', (code) => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (code !== 0) reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${err.slice(-400)}`));
      else resolve(ms);
    });
  });
}

/** The middle sample (the upper middle of an even count). */
export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
