import type { Logger } from '@gatehouse/core';
import { ChannelOutput } from '@gatehouse/protocol/channel-output';
import { sshExitSignal } from '@gatehouse/protocol/signals';
import type { PseudoTtyInfo, ServerChannel, Session } from 'ssh2';
import type { SessionJournal } from './journal';
import type { ExitStatus, SessionCommand, TargetSession, Upstream } from './upstream';

/** What one seat (one session channel of a connection) needs from its connection. */
export interface SeatContext {
  upstream: Upstream;
  seat: number;
  journal: SessionJournal;
  /** Record the PTY output of this seat (the namespace's session_record). */
  record: boolean;
  /** The namespace's connection announcement, shown before an interactive shell. */
  announcement: string;
  /** Whether the client asked for agent forwarding and the relay is configured. */
  agentRelay: boolean;
  /** Marks activity for the idle timeout. */
  touch(): void;
  /** The connection's logger: a seat logs each step at debug level, so a session that hangs says where. */
  log: Logger;
  /** The connection's open channels toward the client, where a close call's notice is written. */
  channels: Set<ServerChannel>;
  /** Writes a line to the connection's interactive shells (who starts watching): each such seat adds its own. */
  notices?: Set<(line: string) => void>;
}

/**
 * Serves one session channel by opening the same kind of session on the target and relaying: the PTY request,
 * environment and agent-forwarding requests are held until the shell, exec or subsystem request says what to
 * open; then data and stderr flow both ways with backpressure, window changes and signals pass on, and the exit
 * status or signal goes back before the channel closes.
 */
export function bridgeSession(session: Session, ctx: SeatContext): void {
  const { journal, seat } = ctx;
  let pty: PseudoTtyInfo | undefined;
  const env: Record<string, string> = {};
  let agent = false;
  let up: TargetSession | undefined;

  session.on('pty', (accept, _reject, info) => {
    pty = info;
    journal.event('pty-req', seat, { term: info.term, cols: info.cols, rows: info.rows });
    journal.update({ term: info.term });
    accept?.();
  });
  session.on('env', (accept, _reject, info) => {
    env[info.key] = info.val;
    accept?.();
  });
  session.on('auth-agent', (accept, reject) => {
    if (!ctx.agentRelay) return reject?.();
    agent = true;
    journal.event('auth-agent-req@openssh.com', seat);
    accept?.();
  });
  session.on('x11', (_accept, reject) => reject?.());
  session.on('window-change', (accept, _reject, info) => {
    if (pty) pty = { ...pty, cols: info.cols, rows: info.rows, width: info.width, height: info.height };
    up?.resize({ cols: info.cols, rows: info.rows, width: info.width, height: info.height });
    journal.event('window-change', seat, { cols: info.cols, rows: info.rows });
    if (ctx.record && pty) journal.resize(seat, info.cols, info.rows);
    accept?.();
  });
  session.on('signal', (accept, _reject, info) => {
    up?.signal(info.name);
    journal.event('signal', seat, { name: info.name });
    accept?.();
  });

  let started = false;
  const start = (
    command: SessionCommand,
    accept: () => ServerChannel | undefined,
    reject: (() => void) | undefined,
  ) => {
    if (started) return reject?.();
    started = true;
    // Accept at once: OpenSSH sends EOF right after the request when it has no input, and ssh2 refuses to create
    // the channel once that EOF is in. Input waits in the channel's buffer until the device side is open.
    const down = accept();
    if (!down) return;
    ctx.channels.add(down);
    down.once('close', () => ctx.channels.delete(down));
    if (command.kind === 'shell') journal.event('shell', seat);
    else if (command.kind === 'exec') journal.event('exec', seat, { command: command.command });
    else journal.event('subsystem', seat, { name: command.name });
    const request = {
      command,
      ...(pty
        ? {
            pty: {
              term: pty.term,
              cols: pty.cols,
              rows: pty.rows,
              width: pty.width,
              height: pty.height,
              modes: pty.modes,
            },
          }
        : {}),
      env,
      agentForward: agent,
    };
    const asked = Date.now();
    ctx.log.debug({ seat, request: command.kind }, 'ssh session request');
    ctx.upstream.open(request).then(
      (target) => {
        ctx.log.debug({ seat, ms: Date.now() - asked }, 'device session open');
        up = target;
        relay(down, target, command.kind);
      },
      (err: Error) => {
        ctx.log.debug({ seat, ms: Date.now() - asked, err: err.message }, 'device session refused');
        journal.event('refused', seat, { request: command.kind, reason: err.message });
        down.stderr.write(`gatehouse: the device refused the ${command.kind} request\r\n`);
        down.exit(1);
        down.end();
      },
    );
  };
  session.on('shell', (accept, reject) => start({ kind: 'shell' }, accept, reject));
  session.on('exec', (accept, reject, info) =>
    start({ kind: 'exec', command: info.command }, accept, reject),
  );
  session.on('subsystem', (accept, reject, info) =>
    start({ kind: 'subsystem', name: info.name }, accept, reject),
  );
  session.on('close', () => up?.close());

  const relay = (down: ServerChannel, target: TargetSession, kind: SessionCommand['kind']) => {
    let exit: ExitStatus | undefined;
    const recording = ctx.record && pty !== undefined;
    if (recording && pty) {
      journal.update({ recorded: true });
      journal.resize(seat, pty.cols, pty.rows);
    }
    // Everything the user's channel gets goes through one ChannelOutput, the announcement too: a second writer
    // could leave a window-blocked write behind that ssh2 would later resend.
    const output = new ChannelOutput(down, [target.stdout, target.stderr]);
    if (kind === 'shell' && pty && ctx.announcement) {
      output.push(false, `${ctx.announcement.replace(/\r?\n/g, '\r\n')}\r\n`);
    }
    if (pty && ctx.notices) {
      // On standard error, through the seat's one writer; only to a terminal (a shell, or a command such as
      // `ssh -t host tmux attach`, recorded and so watchable too), never into the output of a command without one.
      const say = (line: string) => output.push(true, `\r\n${line}\r\n`);
      ctx.notices.add(say);
      down.once('close', () => ctx.notices?.delete(say));
    }
    // A recording the store has not caught up with holds the device's output (journal.ts, MOST_UNWRITTEN).
    let waitingForStore = false;
    target.stdout.on('data', (chunk: Buffer) => {
      ctx.touch();
      if (recording && pty) {
        journal.output(seat, chunk, pty.cols, pty.rows);
        if (journal.behind && !waitingForStore) {
          waitingForStore = true;
          const release = output.hold();
          void journal.caughtUp().then(() => {
            waitingForStore = false;
            release();
          });
        }
      }
      output.push(false, chunk);
    });
    target.stderr.on('data', (chunk: Buffer) => output.push(true, chunk));
    down.on('data', () => ctx.touch());
    down.pipe(target.stdin);
    target.onExit((status) => {
      exit = status;
      journal.event('code' in status ? 'exit-status' : 'exit-signal', seat, status);
    });
    target.onClose(() => {
      ctx.log.debug({ seat, exit }, 'device session closed');
      output.drained().then(() => {
        ctx.log.debug({ seat }, 'ssh session output drained');
        if (exit && 'code' in exit) down.exit(exit.code);
        else if (exit) {
          // Whatever the target said (an SSH upstream passes on any name): ssh2 throws on a name SSH lacks.
          const reported = sshExitSignal(exit.signal, exit.description.slice(0, 256));
          down.exit(reported.signal, exit.core, reported.description);
        }
        down.end();
      });
    });
    down.on('close', () => target.close());
  };
}
