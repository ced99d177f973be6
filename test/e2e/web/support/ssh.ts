import { spawn } from 'node:child_process';
import { clientOptions, passwordOptions } from '../../../support/openssh';

/**
 * The real OpenSSH client through the gateway with a password (sshpass). `tty` asks for a terminal (`-tt`) and
 * types `input` into it once the shell is there; without it, `command` runs as an exec request, no terminal.
 */
export function sshThroughGateway(opts: {
  port: number;
  target: string;
  password: string;
  tty?: boolean;
  input?: string;
  command?: string;
}): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const args = [
      '-e',
      'ssh',
      ...clientOptions({ quiet: true }),
      ...passwordOptions(),
      ...(opts.tty ? ['-tt'] : ['-T']),
      '-p',
      String(opts.port),
      `${opts.target}@127.0.0.1`,
      ...(opts.command ? [opts.command] : []),
    ];
    const child = spawn('sshpass', args, {
      env: { ...process.env, SSHPASS: opts.password },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      out += c.toString();
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`ssh timed out; output: ${out}`));
    }, 30_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
    // Typed once the remote shell is there.
    if (opts.input) setTimeout(() => child.stdin.write(opts.input), 1500);
    else child.stdin.end();
  });
}
