import { createPublicKey } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type { Logger } from '@gatehouse/core';
import ssh2, { type AgentAuthMethod, type Algorithms, type BaseAgent, type PasswordAuthMethod } from 'ssh2';
import type { GatewaySigner } from '../sshkeys/gateway-signer';
import type { SshDevice, TunnelOpener } from './admission';
import { signInOverSessions } from './session-upstream';
import {
  type ExitStatus,
  HostKeyMismatch,
  type IncomingForward,
  type SessionRequest,
  type TargetSession,
  type TerminalSize,
  type Upstream,
  type UpstreamAuth,
  type UpstreamDialer,
  type UpstreamForwarding,
  UpstreamRefused,
} from './upstream';

/** How long signing in to the agent through the tunnel may take. */
const SIGN_IN_TIMEOUT_MS = 20_000;

/**
 * Between the gateway and the agent both ends are ssh2 over an already authenticated tunnel stream, so pick what
 * is fastest in Node: AES-GCM runs in OpenSSL and costs far less than chacha20 in JavaScript.
 */
const upstreamAlgorithms: Algorithms = {
  kex: ['curve25519-sha256', 'curve25519-sha256@libssh.org', 'ecdh-sha2-nistp256'],
  cipher: ['aes128-gcm@openssh.com', 'aes256-gcm@openssh.com', 'chacha20-poly1305@openssh.com'],
  serverHostKey: ['ssh-ed25519', 'ecdsa-sha2-nistp256', 'rsa-sha2-256', 'rsa-sha2-512'],
  hmac: ['hmac-sha2-256-etm@openssh.com', 'hmac-sha2-256'],
  compress: ['none'],
};

/**
 * The agent's upstream, through the device's tunnel. An agent that serves the session protocol (it says so when
 * it opens its tunnel, and offers it only over a private tunnel) gets it: sessions and forwarded connections as
 * tunnel streams, with no second SSH layer (session-upstream.ts). Any other agent gets SSH over a tunnel stream to
 * its own server, which checks the user's password against the device's accounts or the gateway key through
 * `POST /api/auth/ssh` (see docs/content/developers/gateway.md); the agent's host key must be the device key on record. Either way the
 * agent decides the password, and the tunnel itself was opened with proof of the device key.
 */
export class AgentTunnelDialer implements UpstreamDialer {
  constructor(
    private readonly tunnels: TunnelOpener,
    private readonly signer: GatewaySigner,
    private readonly log?: Logger,
  ) {}

  reaches(): boolean {
    return true;
  }

  async dial(device: SshDevice, user: string, auth: UpstreamAuth, agent?: BaseAgent): Promise<Upstream> {
    const kinds = (await this.tunnels.streamKinds?.(device.uid)) ?? [];
    if (kinds.includes('connection')) {
      return signInOverSessions(this.tunnels, device, user, auth, agent, SIGN_IN_TIMEOUT_MS, this.log);
    }
    const started = Date.now();
    const stream = await this.tunnels.open(device.uid, { kind: 'ssh' });
    this.log?.debug({ device: device.uid, ms: Date.now() - started }, 'device ssh stream open');
    const client = await signIn(stream, {
      username: user,
      // The gateway key signs only through the signer, which records what it signs for this device: the agent's
      // POST /api/auth/ssh gets a signature for that and nothing else.
      method:
        'password' in auth
          ? { type: 'password', username: user, password: auth.password }
          : { type: 'agent', username: user, agent: this.signer.agentFor(device.uid) },
      agent,
      timeoutMs: SIGN_IN_TIMEOUT_MS,
      hostKey: device.public_key,
    });
    return new AgentUpstream(client);
  }
}

/** A signed-in ssh2 client to the agent, as the gateway's Upstream. */
class AgentUpstream implements Upstream {
  readonly forwarding: UpstreamForwarding;

  constructor(private readonly client: ssh2.Client) {
    this.forwarding = {
      connect: (src, dest) =>
        new Promise((resolve, reject) =>
          client.forwardOut(src.ip, src.port, dest.host, dest.port, (err, channel) =>
            err ? reject(err) : resolve(channel),
          ),
        ),
      listen: (address, port) =>
        new Promise((resolve, reject) =>
          client.forwardIn(address, port, (err, bound) => (err ? reject(err) : resolve(bound || port))),
        ),
      unlisten: (address, port) =>
        new Promise((resolve, reject) =>
          client.unforwardIn(address, port, (err) => (err ? reject(err) : resolve())),
        ),
      onIncoming: (listener) =>
        client.on('tcp connection', (info: IncomingForward, accept, reject) =>
          listener(info, () => Promise.resolve(accept()), reject),
        ),
    };
  }

  open(request: SessionRequest): Promise<TargetSession> {
    const { command, pty } = request;
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
    const options = { env: request.env, ...(request.agentForward ? { agentForward: true } : {}) };
    return new Promise((resolve, reject) => {
      const opened = (err: Error | undefined, channel: ssh2.ClientChannel) =>
        err ? reject(err) : resolve(agentSession(channel));
      if (command.kind === 'shell') this.client.shell(ptyOpts ?? false, options, opened);
      else if (command.kind === 'exec') {
        this.client.exec(command.command, { ...options, ...(ptyOpts ? { pty: ptyOpts } : {}) }, opened);
      } else this.client.subsys(command.name, opened);
    });
  }

  onClose(listener: () => void): void {
    this.client.on('close', listener);
  }

  end(): void {
    this.client.end();
  }
}

/** An ssh2 session channel is all three streams of a TargetSession: no wrapping stream, no copy. */
function agentSession(channel: ssh2.ClientChannel): TargetSession {
  return {
    stdin: channel,
    stdout: channel,
    stderr: channel.stderr,
    resize: (size: TerminalSize) => channel.setWindow(size.rows, size.cols, size.height, size.width),
    signal: (name) => channel.signal(name),
    onExit: (listener) =>
      channel.on('exit', (code: number | null, signal?: string, core?: boolean, description?: string) => {
        const exit: ExitStatus =
          typeof code === 'number'
            ? { code }
            : { signal: signal ?? 'KILL', core: core ?? false, description: description ?? '' };
        listener(exit);
      }),
    onClose: (listener) => channel.on('close', listener),
    close: () => channel.close(),
  };
}

/**
 * Whether the SSH host key an agent offers (the SSH wire blob) is the device key on record (PEM). Compared as SPKI
 * DER, so the encodings of the two do not matter; anything unreadable is a mismatch.
 */
function isDeviceKey(offered: Buffer, registeredPem: string): boolean {
  try {
    const parsed = ssh2.utils.parseKey(offered);
    const key = Array.isArray(parsed) ? parsed[0] : parsed;
    if (!key || key instanceof Error) return false;
    const der = (pem: string) => createPublicKey(pem).export({ type: 'spki', format: 'der' });
    return der(key.getPublicPEM()).equals(der(registeredPem));
  } catch {
    return false;
  }
}

/**
 * Signs in to the device's agent over `stream` as `username`. Resolves with the ready client, or rejects with
 * UpstreamRefused when the agent said no to the credentials (and with the transport error otherwise).
 */
function signIn(
  stream: Duplex,
  opts: {
    username: string;
    method: PasswordAuthMethod | AgentAuthMethod;
    agent?: BaseAgent;
    timeoutMs: number;
    hostKey: string;
  },
): Promise<ssh2.Client> {
  const { method } = opts;
  return new Promise((resolve, reject) => {
    const client = new ssh2.Client();
    let settled = false;
    let mismatch = false;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      client.end();
      stream.destroy();
      reject(err);
    };
    client.once('ready', () => {
      settled = true;
      resolve(client);
    });
    // Errors after sign-in surface as 'close' to whoever holds the client.
    client.on('error', (err: Error & { level?: string }) => {
      if (mismatch) return fail(new HostKeyMismatch('the agent showed a host key other than the device key'));
      fail(
        err.level === 'client-authentication' ? new UpstreamRefused('the device refused the sign-in') : err,
      );
    });
    client.once('close', () => fail(new Error('the device closed the connection during sign-in')));
    client.connect({
      sock: stream as unknown as ssh2.ConnectConfig['sock'],
      username: opts.username,
      // Exactly the one method chosen: ssh2 would otherwise also try the agent relay's identities.
      authHandler: [method],
      ...(opts.agent ? { agent: opts.agent } : {}),
      algorithms: upstreamAlgorithms,
      readyTimeout: opts.timeoutMs,
      keepaliveInterval: 15_000,
      keepaliveCountMax: 4,
      // The agent's host key is its device key: anything else is not the device, and it gets no credential (the
      // password or key sign-in is sent only after this check).
      hostVerifier: (key: Buffer) => {
        mismatch = !isDeviceKey(key, opts.hostKey);
        return !mismatch;
      },
    });
  });
}
