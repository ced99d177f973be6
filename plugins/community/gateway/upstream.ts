import type { Duplex, Readable, Writable } from 'node:stream';
import type ssh2 from 'ssh2';
import type { TerminalModes } from 'ssh2';
import type { SshDevice } from './admission';

/**
 * The gateway's upstream: where the sessions of a signed-in connection run. The user's side is always SSH (or the
 * web terminal); the target's side is whatever reaches the device: the agent through its tunnel (agent-upstream.ts),
 * or another kind of target a plugin adds (a container exec through a container engine). Everything the gateway
 * does with a target goes through these few calls, so a new kind of target needs nothing else of the gateway.
 */

/** A terminal's size, as SSH's `pty-req` and `window-change` carry it. */
export interface TerminalSize {
  cols: number;
  rows: number;
  /** Pixels; 0 when the client does not say. */
  width: number;
  height: number;
}

export interface PtyRequest extends TerminalSize {
  term: string;
  modes?: TerminalModes;
}

/** What to run: SSH's three session requests. */
export type SessionCommand =
  | { kind: 'shell' }
  | { kind: 'exec'; command: string }
  | { kind: 'subsystem'; name: string };

export interface SessionRequest {
  command: SessionCommand;
  /** A terminal, when the client asked for one. */
  pty?: PtyRequest;
  env: Record<string, string>;
  /** The client asked for agent forwarding (`ssh -A`); a target that cannot forward an agent ignores it. */
  agentForward: boolean;
}

/** How a session ended: an exit status, or the signal that ended it. */
export type ExitStatus = { code: number } | { signal: string; core: boolean; description: string };

/**
 * One session running on the target. `stdin` takes the user's input (its end is the user's EOF); `stdout` and
 * `stderr` carry the output with back-pressure (pausing them holds the target). One object may be all three.
 */
export interface TargetSession {
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  resize(size: TerminalSize): void;
  /** Sends a signal by its SSH name (`INT`, `TERM`, ...); a target without signals ignores it. */
  signal(name: string): void;
  /** The exit status or signal, reported at most once, before `onClose`. */
  onExit(listener: (exit: ExitStatus) => void): void;
  onClose(listener: () => void): void;
  close(): void;
}

/** What the target says of a connection forwarded to the user (`ssh -R`). */
export interface IncomingForward {
  destIP: string;
  destPort: number;
  srcIP: string;
  srcPort: number;
}

/** Port forwarding on the target (`ssh -L`, `-D`, `-R`). */
export interface UpstreamForwarding {
  /** A connection from the target to `dest`, as seen from the device. */
  connect(src: { ip: string; port: number }, dest: { host: string; port: number }): Promise<Duplex>;
  /** Listens on the target; answers the port bound (the one asked for, or the one chosen for port 0). */
  listen(address: string, port: number): Promise<number>;
  unlisten(address: string, port: number): Promise<void>;
  /** A connection to a listening port: `accept` gives its stream, `reject` refuses it. */
  onIncoming(
    listener: (info: IncomingForward, accept: () => Promise<Duplex>, reject: () => void) => void,
  ): void;
}

/** A signed-in connection to one target; every session channel of the user's connection opens a session here. */
export interface Upstream {
  open(request: SessionRequest): Promise<TargetSession>;
  /** Absent when the target has no port forwarding: the gateway refuses those requests. */
  readonly forwarding?: UpstreamForwarding;
  onClose(listener: () => void): void;
  end(): void;
}

/**
 * The credential the gateway signs in on the device with: the user's password, or its own key (`gatewayKey`) for a
 * public key the namespace allows the user on this device.
 */
export type UpstreamAuth = { password: string } | { gatewayKey: true };

/**
 * Reaches one kind of target. The gateway asks the dialers in order and signs in through the first that reaches
 * the device (the agent tunnel reaches every device an agent registered).
 */
export interface UpstreamDialer {
  reaches(device: SshDevice): boolean;
  /**
   * Whether a device it reaches can be reached now (checked at admission, before any credential is asked for).
   * Without it, the agent tunnel hub says whether the device's agent is connected.
   */
  online?(device: SshDevice): Promise<boolean>;
  /**
   * Signs in on the device as `user` with the credential the gateway chose (the user's password, or the gateway's
   * key for a public key the namespace allows). Rejects with UpstreamRefused when the target says no to the
   * credential, HostKeyMismatch when the target is not the device, and any other error when it cannot be reached.
   */
  dial(device: SshDevice, user: string, auth: UpstreamAuth, agent?: ssh2.BaseAgent): Promise<Upstream>;
}

export class UpstreamRefused extends Error {
  override name = 'UpstreamRefused';
}

/** The agent at the end of the tunnel showed a host key other than the device's registered key. */
export class HostKeyMismatch extends Error {
  override name = 'HostKeyMismatch';
}
