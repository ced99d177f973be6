import { spawn } from 'node:child_process';
import { clientOptions } from '../../support/openssh';

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Options every test connection uses: a fresh host key per agent, no local config, this port. */
export function baseSshOptions(port: number): string[] {
  return [...clientOptions({ quiet: true, connectTimeout: 10 }), '-p', String(port)];
}

/** Runs a command (ssh, scp, sftp) under sshpass with `password`, collecting its output. */
export function runWithPassword(
  password: string,
  command: string,
  args: string[],
  options: { input?: string | Buffer; timeoutMs?: number } = {},
): Promise<Run> {
  return run('sshpass', ['-e', command, ...args], { ...options, env: { SSHPASS: password } });
}

export function run(
  command: string,
  args: string[],
  options: { input?: string | Buffer; timeoutMs?: number; env?: Record<string, string> } = {},
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: { ...process.env, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} timed out\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, options.timeoutMs ?? 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(options.input ?? '');
  });
}
