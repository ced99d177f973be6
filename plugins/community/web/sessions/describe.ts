import type { Session, SessionEvent } from '../types';

// Sessions in words: why one was not recorded, how it ended, and each event as a sentence, from the events the
// gateway writes (plugins/community/gateway: admission.ts, connector.ts, bridge.ts, web-terminal.ts).

type Data = Record<string, unknown>;

function dataOf(e: SessionEvent): Data {
  return e.data && typeof e.data === 'object' && !Array.isArray(e.data) ? (e.data as Data) : {};
}

function eventsOf(s: Session): SessionEvent[] {
  return s.events?.items ?? [];
}

function has(s: Session, type: string): boolean {
  return (s.events?.types ?? eventsOf(s).map((e) => e.type)).includes(type);
}

const refusals: Record<string, string> = {
  pending: 'the device was still waiting to be accepted',
  rejected: 'the device was rejected',
  offline: 'the device was offline',
  firewall: 'a firewall rule denied it',
  unreachable: 'the device could not be reached',
  namespace: 'the device is in another namespace',
};

function refusalOf(s: Session): string | undefined {
  const refused = eventsOf(s).find((e) => e.type === 'refused' && !('request' in dataOf(e)));
  if (!refused) return undefined;
  const reason = String(dataOf(refused).reason ?? '');
  return refusals[reason] ?? (reason ? `the device is ${reason}` : 'the gateway refused it');
}

export type RecordingState =
  | { recorded: true }
  | {
      recorded: false;
      why: 'refused' | 'sign-in-failed' | 'not-signed-in' | 'no-terminal' | 'off' | 'removed';
      text: string;
    };

/**
 * Why a session was (not) recorded, from what its events say happened: recording covers terminal output, so a
 * session that never signed in, or signed in but opened no terminal (a command, a file transfer, port forwarding),
 * has nothing to record whatever the setting; only a terminal session that was not recorded says the setting was off.
 */
export function recordingState(s: Session): RecordingState {
  if (s.recorded && s.recording_removed_at)
    return {
      recorded: false,
      why: 'removed',
      text: `The recording was removed on ${new Date(s.recording_removed_at).toLocaleDateString(undefined, { dateStyle: 'medium' })}: it was older than this namespace keeps recordings (Namespace settings, Keep recordings). The session's details and events stay.`,
    };
  if (s.recorded) return { recorded: true };
  if (!s.authenticated) {
    const refusal = refusalOf(s);
    if (refusal)
      return {
        recorded: false,
        why: 'refused',
        text: `The gateway refused the connection before sign-in (${refusal}), so there was nothing to record.`,
      };
    if (has(s, 'auth-failed'))
      return {
        recorded: false,
        why: 'sign-in-failed',
        text: 'The sign-in failed, so there was no terminal to record.',
      };
    return {
      recorded: false,
      why: 'not-signed-in',
      text: s.active
        ? 'The session has not signed in yet.'
        : 'The session never signed in, so there was no terminal to record.',
    };
  }
  if (!has(s, 'pty-req'))
    return {
      recorded: false,
      why: 'no-terminal',
      text: 'The session had no terminal (a command, a file transfer or port forwarding without a PTY). Recording covers terminal output only.',
    };
  return {
    recorded: false,
    why: 'off',
    text: 'Session recording was off for this namespace when the session ran. Namespace settings turn it on.',
  };
}

/** The short form for the sessions list. */
export function recordingLabel(s: Session): string {
  const state = recordingState(s);
  if (state.recorded) return 'Recorded';
  return {
    refused: 'Refused',
    'sign-in-failed': 'Sign-in failed',
    'not-signed-in': 'Not signed in',
    'no-terminal': 'No terminal',
    off: 'Recording off',
    removed: 'Recording removed',
  }[state.why];
}

/** An exit event's outcome in one shape, whether the data is `{code}`, `{signal}` or (older rows) a bare value. */
export function exitOf(e: SessionEvent): { code: number } | { signal: string } | undefined {
  if (e.type !== 'exit-status' && e.type !== 'exit-signal') return undefined;
  const d = e.data;
  if (typeof d === 'number') return { code: d };
  if (typeof d === 'string') return { signal: d };
  const data = dataOf(e);
  if (typeof data.code === 'number') return { code: data.code };
  if (typeof data.signal === 'string') return { signal: data.signal };
  return undefined;
}

export function exitText(exit: { code: number } | { signal: string }): string {
  return 'code' in exit ? `exit status ${exit.code}` : `killed by signal ${exit.signal.replace(/^SIG/, '')}`;
}

/** How the session's programs ended, one entry per channel that ended. */
export function exitsOf(s: Session): { seat: number; exit: { code: number } | { signal: string } }[] {
  const out: { seat: number; exit: { code: number } | { signal: string } }[] = [];
  for (const e of eventsOf(s)) {
    const exit = exitOf(e);
    if (exit) out.push({ seat: e.seat ?? 0, exit });
  }
  return out;
}

/** How the session signed in, from its `authenticated` event. */
export function signInOf(s: Session): string | undefined {
  const e = eventsOf(s).find((x) => x.type === 'authenticated');
  if (!e) return undefined;
  const d = dataOf(e);
  if (d.method === 'publickey')
    return `Public key${typeof d.fingerprint === 'string' ? ` ${d.fingerprint}` : ''}`;
  if (d.method === 'password') return 'Password';
  return typeof d.method === 'string' ? d.method : undefined;
}

/** One event as a sentence. */
export function describeEvent(e: SessionEvent): string {
  const d = dataOf(e);
  const size = (x: Data) => (x.cols && x.rows ? `${x.cols}×${x.rows}` : '');
  switch (e.type) {
    case 'authenticated':
      return d.method === 'publickey'
        ? `Signed in with a public key${typeof d.fingerprint === 'string' ? ` (${d.fingerprint})` : ''}`
        : 'Signed in with a password';
    case 'auth-failed':
      return d.method === 'publickey'
        ? `Sign-in with a public key failed${typeof d.fingerprint === 'string' ? ` (${d.fingerprint})` : ''}`
        : 'Sign-in with a password failed';
    case 'refused':
      if ('request' in d)
        return `The device refused the ${String(d.request)}${d.reason ? `: ${String(d.reason)}` : ''}`;
      return `Refused: ${refusals[String(d.reason)] ?? String(d.reason ?? 'by the gateway')}`;
    case 'pty-req':
      return `Opened a terminal${d.term ? ` (${String(d.term)}${size(d) ? `, ${size(d)}` : ''})` : ''}`;
    case 'shell':
      return 'Started a shell';
    case 'exec':
      return `Ran a command: ${String(d.command ?? '')}`;
    case 'subsystem':
      return d.name === 'sftp' ? 'Started SFTP (file transfer)' : `Started the ${String(d.name)} subsystem`;
    case 'window-change':
      return `Resized the terminal to ${size(d)}`;
    case 'signal':
      return `Sent the signal ${String(d.name ?? '')}`;
    case 'exit-status':
    case 'exit-signal': {
      const exit = exitOf(e);
      return exit ? `Ended with ${exitText(exit)}` : 'Ended';
    }
    case 'auth-agent-req@openssh.com':
      return 'Forwarded the SSH agent';
    case 'direct-tcpip':
      return `Forwarded a connection to ${String(d.host)}:${String(d.port)} (ssh -L or -D)`;
    case 'tcpip-forward':
      return `Opened a remote forward on ${String(d.address)}:${String(d.port)} (ssh -R)`;
    case 'env':
      return `Set ${String(d.name ?? 'an environment variable')}`;
    default:
      return e.type;
  }
}

/** `1 h 02 min`, `3 min 07 s`, `12 s`. */
export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const sec = total % 60;
  if (h) return `${h} h ${String(m).padStart(2, '0')} min`;
  if (m) return `${m} min ${String(sec).padStart(2, '0')} s`;
  return `${sec} s`;
}

/** `0:07`, `12:03`, `1:02:03`: a position in a recording. */
export function formatClock(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const sec = String(total % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
}

/** When the session ended (its last sign of life once it is no longer active), and how long it lasted. */
export function timing(s: Session, now = Date.now()): { ended: string | undefined; durationMs: number } {
  const start = Date.parse(s.started_at);
  const end = s.active ? now : Date.parse(s.last_seen);
  return { ended: s.active ? undefined : s.last_seen, durationMs: Math.max(0, end - start) };
}
