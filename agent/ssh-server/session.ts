import { spawn } from 'node:child_process';
import { chmodSync, chownSync, closeSync, constants, existsSync, openSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import type { LocalAccount } from '@gatehouse/protocol/accounts';
import { ChannelOutput, type SessionChannel } from '@gatehouse/protocol/channel-output';
import { sshExitSignal } from '@gatehouse/protocol/signals';
import { spawn as spawnPty } from '@lydell/node-pty';
import type { Session } from 'ssh2';
import { serveBuiltinSftp } from './builtin-sftp';
import {
  acceptableClientVariable,
  commandAs,
  loginEnvironment,
  switchUserOptions,
} from './login-environment';

/** Where Debian, Fedora and Alpine put OpenSSH's SFTP server. */
const SFTP_SERVERS = [
  '/usr/lib/openssh/sftp-server',
  '/usr/libexec/openssh/sftp-server',
  '/usr/lib/ssh/sftp-server',
];

export function systemSftpServer(): string | undefined {
  return SFTP_SERVERS.find((path) => existsSync(path));
}

export interface PtyRequest {
  term: string;
  cols: number;
  rows: number;
}

export interface Running {
  signal(name: string): void;
  resize?(cols: number, rows: number): void;
}

/** A login shell when no command is given, as sshd does with argv[0] "-sh"; otherwise the command through it. */
export function runShell(
  channel: SessionChannel,
  account: LocalAccount,
  command: string | undefined,
  env: Record<string, string>,
  pty: PtyRequest | undefined,
): Running {
  const args = command === undefined ? ['-l'] : ['-c', command];
  return pty
    ? runInPty(channel, account, args, env, pty)
    : runPiped(channel, account.shell, args, account, env);
}

export interface SessionContext {
  account: LocalAccount;
  /** Starts agent forwarding for this session; answers the SSH_AUTH_SOCK path. */
  startAgentForwarding?: () => Promise<string>;
  log: (message: string) => void;
  /** Path of OpenSSH's sftp-server, or 'builtin'; found on the device when not given. */
  sftpServer?: string | 'builtin';
}

/**
 * One "session" channel: collects the pre-start requests (pty, env, agent forwarding),
 * then runs a shell, a command or the SFTP subsystem as the signed-in account.
 */
export function serveSession(session: Session, context: SessionContext): void {
  const { account } = context;
  const clientEnv: Record<string, string> = {};
  let ptyRequest: PtyRequest | undefined;
  let running: Running | undefined;
  let authSock: string | undefined;
  // OpenSSH sends auth-agent-req without waiting for a reply and the exec right after;
  // the program must not start before the socket it is told about exists.
  let setup: Promise<void> = Promise.resolve();

  session.on('pty', (accept, _reject, info) => {
    ptyRequest = { term: info.term || 'xterm', cols: info.cols || 80, rows: info.rows || 24 };
    accept?.();
  });

  session.on('window-change', (accept, _reject, info) => {
    if (ptyRequest) {
      ptyRequest.cols = info.cols;
      ptyRequest.rows = info.rows;
    }
    running?.resize?.(info.cols, info.rows);
    accept?.();
  });

  session.on('env', (accept, reject, info) => {
    if (acceptableClientVariable(info.key)) {
      clientEnv[info.key] = info.val;
      accept?.();
    } else reject?.();
  });

  session.on('signal', (accept, _reject, info) => {
    running?.signal(info.name);
    accept?.();
  });

  session.on('auth-agent', (accept, reject) => {
    if (!context.startAgentForwarding) {
      reject?.();
      return;
    }
    const start = context.startAgentForwarding;
    setup = setup.then(() =>
      start().then(
        (path) => {
          authSock = path;
          accept?.();
        },
        (error: Error) => {
          context.log(`agent forwarding refused: ${error.message}`);
          reject?.();
        },
      ),
    );
  });

  const environment = () => {
    const extra: Record<string, string> = { ...clientEnv };
    if (ptyRequest) extra['TERM'] = ptyRequest.term;
    if (authSock) extra['SSH_AUTH_SOCK'] = authSock;
    return loginEnvironment(account, extra);
  };

  const start = (channel: SessionChannel, command: string | undefined) => {
    setup.then(() => {
      running = runShell(channel, account, command, environment(), ptyRequest);
    });
  };

  session.on('shell', (accept) => start(accept(), undefined));
  session.on('exec', (accept, _reject, info) => start(accept(), info.command));

  // ssh2 hands the raw channel to 'subsystem' listeners unless an 'sftp' listener exists,
  // so the built-in server is only registered when it is the one to use.
  const sftpServer = context.sftpServer === undefined ? systemSftpServer() : context.sftpServer;
  if (sftpServer === 'builtin' || sftpServer === undefined) {
    session.on('sftp', (accept, reject) => {
      if (account.uid !== process.getuid?.()) {
        // In-process file access would bypass the account's permissions.
        context.log(`sftp for ${account.name} refused: no sftp-server on this device`);
        reject?.();
        return;
      }
      serveBuiltinSftp(accept(), account.home);
    });
  }

  session.on('subsystem', (accept, reject, info) => {
    const server = info.name === 'sftp' && sftpServer !== 'builtin' ? sftpServer : undefined;
    if (!server) {
      context.log(`subsystem ${info.name} refused: not available on this device`);
      reject?.();
      return;
    }
    const channel = accept();
    setup.then(() => {
      running = runPiped(channel, server, [], account, environment());
    });
  });
}

export function runPiped(
  channel: SessionChannel,
  file: string,
  args: string[],
  account: LocalAccount,
  env: Record<string, string>,
): Running {
  const command = commandAs(account, file, args);
  const child = spawn(command.file, command.args, {
    cwd: account.home,
    env,
    stdio: 'pipe',
    ...command.spawnOptions,
  });
  child.stdin.on('error', () => {}); // EPIPE when the program exits before reading its input
  channel.pipe(child.stdin);
  const output = new ChannelOutput(channel, [child.stdout, child.stderr]);
  child.stdout.on('data', (chunk: Buffer) => output.push(false, chunk));
  child.stderr.on('data', (chunk: Buffer) => output.push(true, chunk));
  child.on('error', (error) => {
    // Through the same output as the program's streams: one writer per channel (see ChannelOutput).
    output.push(true, `${error.message}\r\n`);
    output.drained().then(() => {
      channel.exit(127);
      channel.end();
    });
  });
  child.on('close', (code, signal) => {
    output.drained().then(() => {
      if (signal) {
        const reported = sshExitSignal(signal);
        channel.exit(reported.signal, false, reported.description);
      } else channel.exit(code ?? 0);
      channel.end();
    });
  });
  channel.on('close', () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGHUP');
  });
  return { signal: (name) => child.kill(`SIG${name}` as NodeJS.Signals) };
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A signal's name by its number (node-pty reports the number), for the exit status. */
function signalName(signal: number): string {
  return Object.entries(osConstants.signals).find(([, value]) => value === signal)?.[0] ?? 'SIGKILL';
}

function runInPty(
  channel: SessionChannel,
  account: LocalAccount,
  args: string[],
  env: Record<string, string>,
  request: PtyRequest,
): Running {
  const command = commandAs(account, account.shell, args);
  const term = spawnPty(command.file, command.args, {
    name: request.term,
    cols: request.cols,
    rows: request.rows,
    cwd: account.home,
    env,
    encoding: null,
    ...command.spawnOptions,
  });
  // Linux hangs up the pty master as soon as the last slave descriptor closes, and output
  // the child wrote just before exiting but that we had not read yet is dropped (seen as
  // the last ~14 KB of a `seq` missing whenever the event loop was busy). Holding a slave
  // descriptor until the exit is handled keeps that tail readable.
  const ptsName = (term as unknown as { ptsName?: string }).ptsName;
  let slave: number | undefined;
  try {
    if (ptsName) slave = openSync(ptsName, constants.O_RDWR | constants.O_NOCTTY);
  } catch {
    slave = undefined;
  }
  // The terminal belongs to the signed-in account, as sshd leaves it (mesg, write, tty).
  const owner = switchUserOptions(account);
  if (ptsName && owner.uid !== undefined && owner.gid !== undefined) {
    try {
      chownSync(ptsName, owner.uid, owner.gid);
      chmodSync(ptsName, 0o620);
    } catch {
      // A pty we cannot hand over still works; only tools that check its owner complain.
    }
  }
  // Flow control: stop reading the pty while the channel is backed up, as sshd does, but
  // only past a large backlog (the channel's high-water mark, ssh2's 2 MiB window). Output
  // left in the pty when the child exits is lost if it is not read promptly (node-pty gives
  // up on the pty 200 ms after the exit, and pausing at every full write lost the tail of a
  // 200 KB `seq`); while paused we also watch for the child's exit and read the rest at once.
  let paused = false;
  let childGone = false;
  let watch: NodeJS.Timeout | undefined;
  const resume = () => {
    if (!paused) return;
    paused = false;
    clearInterval(watch);
    term.resume();
  };
  term.onData((data: string | Buffer) => {
    // Pause only when write() says the channel is full: that is the one case in which the channel promises a
    // 'drain'. Pausing on a smaller backlog waited for a 'drain' that never came, and the session froze.
    if (channel.write(data) || paused || childGone) return;
    paused = true;
    term.pause();
    channel.once('drain', resume);
    watch = setInterval(() => {
      if (processExists(term.pid)) return;
      childGone = true;
      resume();
    }, 50);
  });
  // node-pty's typings only name strings, but its Unix terminal writes whatever the
  // socket takes; passing bytes keeps split UTF-8 sequences and binary input intact.
  const input = term as unknown as { write(data: Buffer): void };
  channel.on('data', (data: Buffer) => input.write(data));
  term.onExit(({ exitCode, signal }) => {
    clearInterval(watch);
    if (slave !== undefined) closeSync(slave);
    if (signal) {
      const reported = sshExitSignal(signalName(signal));
      channel.exit(reported.signal, false, reported.description);
    } else channel.exit(exitCode);
    channel.end();
  });
  channel.on('close', () => term.kill('SIGHUP'));
  return {
    signal: (name) => term.kill(`SIG${name}`),
    resize: (cols, rows) => term.resize(cols, rows),
  };
}
