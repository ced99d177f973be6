import { ChannelOutput } from '@gatehouse/agent/ssh/channel-output';
import type ssh2 from 'ssh2';
import type { PseudoTtyInfo, ServerChannel, Session } from 'ssh2';
import type { SessionJournal } from './journal';

/** What one seat (one session channel of a connection) needs from its connection. */
export interface SeatContext {
  upstream: ssh2.Client;
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
}

type Exit = { code: number } | { signal: string; core: boolean; description: string };

/**
 * Serves one session channel by opening the same kind of channel on the device and relaying: the PTY request,
 * environment and agent-forwarding requests are held until the shell, exec or subsystem request says what to
 * open; then data and stderr flow both ways with backpressure, window changes and signals pass on, and the exit
 * status or signal goes back before the channel closes.
 */
export function bridgeSession(session: Session, ctx: SeatContext): void {
  const { journal, seat } = ctx;
  let pty: PseudoTtyInfo | undefined;
  const env: Record<string, string> = {};
  let agent = false;
  let up: ssh2.ClientChannel | undefined;

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
    up?.setWindow(info.rows, info.cols, info.height, info.width);
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
    kind: 'shell' | 'exec' | 'subsystem',
    accept: () => ServerChannel | undefined,
    reject: (() => void) | undefined,
    arg?: string,
  ) => {
    if (started) return reject?.();
    started = true;
    // Accept at once: OpenSSH sends EOF right after the request when it has no input, and ssh2 refuses to create
    // the channel once that EOF is in. Input waits in the channel's buffer until the device side is open.
    const down = accept();
    if (!down) return;
    const opened = (err: Error | undefined, channel: ssh2.ClientChannel) => {
      if (err) {
        journal.event('refused', seat, { request: kind, reason: err.message });
        down.stderr.write(`gatehouse: the device refused the ${kind} request\r\n`);
        down.exit(1);
        down.end();
        return;
      }
      up = channel;
      relay(down, channel, kind);
    };
    const ptyOpts = pty
      ? {
          term: pty.term,
          cols: pty.cols,
          rows: pty.rows,
          width: pty.width,
          height: pty.height,
          modes: pty.modes,
        }
      : undefined;
    const options = { env, ...(agent ? { agentForward: true } : {}) };
    if (kind === 'shell') {
      journal.event('shell', seat);
      ctx.upstream.shell(ptyOpts ?? false, options, opened);
    } else if (kind === 'exec') {
      journal.event('exec', seat, { command: arg });
      ctx.upstream.exec(arg ?? '', { ...options, ...(ptyOpts ? { pty: ptyOpts } : {}) }, opened);
    } else {
      journal.event('subsystem', seat, { name: arg });
      ctx.upstream.subsys(arg ?? '', opened);
    }
  };
  session.on('shell', (accept, reject) => start('shell', accept, reject));
  session.on('exec', (accept, reject, info) => start('exec', accept, reject, info.command));
  session.on('subsystem', (accept, reject, info) => start('subsystem', accept, reject, info.name));
  session.on('close', () => up?.close());

  const relay = (down: ServerChannel, channel: ssh2.ClientChannel, kind: string) => {
    let exit: Exit | undefined;
    const recording = ctx.record && pty !== undefined;
    if (recording && pty) {
      journal.update({ recorded: true });
      journal.resize(seat, pty.cols, pty.rows);
    }
    // Everything the user's channel gets goes through one ChannelOutput, the announcement too: a second writer
    // could leave a window-blocked write behind that ssh2 would later resend.
    const output = new ChannelOutput(down, [channel, channel.stderr]);
    if (kind === 'shell' && pty && ctx.announcement) {
      output.push(false, `${ctx.announcement.replace(/\r?\n/g, '\r\n')}\r\n`);
    }
    channel.on('data', (chunk: Buffer) => {
      ctx.touch();
      if (recording && pty) journal.output(seat, chunk, pty.cols, pty.rows);
      output.push(false, chunk);
    });
    channel.stderr.on('data', (chunk: Buffer) => output.push(true, chunk));
    down.on('data', () => ctx.touch());
    down.pipe(channel);
    channel.on('exit', (code: number | null, signal?: string, core?: boolean, description?: string) => {
      exit =
        typeof code === 'number'
          ? { code }
          : { signal: signal ?? 'KILL', core: core ?? false, description: description ?? '' };
      journal.event(typeof code === 'number' ? 'exit-status' : 'exit-signal', seat, exit);
    });
    channel.on('close', () => {
      output.drained().then(() => {
        if (exit && 'code' in exit) down.exit(exit.code);
        else if (exit) down.exit(exit.signal, exit.core, exit.description);
        down.end();
      });
    });
    down.on('close', () => channel.close());
  };
}
