import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type Cache, clientAddress, type Logger, Unauthorized, type UserCaller } from '@gatehouse/core';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import { md5Fingerprint } from '../sshkeys/fingerprint';
import { SIGN_IN_ENDED, type UserService } from '../users/service';
import { type Admitted, admit, admitsKey } from './admission';
import { newNonce, parseOfferedKey, SIGNATURE_NAMESPACE, verifyProof } from './key-proof';
import { sleep } from './sign-in-penalties';
import type { SshGateway } from './ssh-gateway';
import type { TerminalTickets } from './terminal-tickets';
import { type TargetSession, type Upstream, type UpstreamAuth, UpstreamRefused } from './upstream';

export const WEB_TERMINAL_PATH = '/ws/ssh';
/** A control frame is small JSON; anything larger is a client bug or hostile. */
const MAX_CONTROL = 4096;
/** Output sent to the browser and not yet handed to its socket: the device is paused above, resumed below. */
const BROWSER_PAUSE_ABOVE = 1024 * 1024;
const BROWSER_RESUME_BELOW = 256 * 1024;

/** A JSON control frame from the browser. */
interface Frame {
  type?: unknown;
  password?: unknown;
  method?: unknown;
  key?: unknown;
  signature?: unknown;
  cols?: unknown;
  rows?: unknown;
}

function size(value: string | null, fallback: number): number {
  const n = Number(value);
  return Number.isInteger(n) && n >= 1 && n <= 1000 ? n : fallback;
}

const REASONS: Record<number, string> = {
  401: 'Unauthorized',
  403: 'Forbidden',
  429: 'Too Many Requests',
  503: 'Service Unavailable',
};

function refuse(socket: Duplex, status: number, message: string, headers = ''): void {
  const body = JSON.stringify({ message });
  socket.end(
    `HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}\r\nContent-Type: application/json\r\n${headers}` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * The web terminal's server end (`GET /ws/ssh?ticket=&cols=&rows=`, session type `web`). The ticket, from
 * `POST /api/terminal/tickets`, names the user, namespace and target; before the upgrade it is redeemed (once)
 * and its user goes through the same token check as every REST call (account, password-change stamp, membership).
 * The first text frame signs in to the device: `{type:'auth', password}` as an SSH password would, or
 * `{type:'auth', method:'publickey', key}` with an OpenSSH public key line, which the gateway answers with
 * `{type:'challenge', namespace, nonce}` and the browser with `{type:'signature', signature}` (key-proof.ts); the
 * private key never leaves the browser, and the gateway signs in to the device with its own key as it does for
 * SSH public-key sign-ins. Then binary frames carry the terminal both ways and `{type:'resize', cols, rows}` changes its
 * size. The gateway answers `{type:'error', message}` or `{type:'exit', code}` before it closes.
 *
 * Guessing a device password through it is exactly as hard as through the SSH gateway: a wrong password or key
 * signature earns the same penalties against its source and its target (sign-in-penalties.ts), is answered after
 * the same slowdown, and a refused source's sockets answer 429 before any ticket is looked at. The user is a
 * signed-in member, and is told why a device of their namespace cannot be reached; a device of another namespace
 * is not found, as one that does not exist.
 */
export class WebTerminal {
  private readonly wss = new WebSocketServer({
    noServer: true,
    maxPayload: 1024 * 1024,
    perMessageDeflate: false,
  });
  private readonly sockets = new Set<WebSocket>();
  /** The open sockets by the sign-in whose ticket opened them: signing out closes them. */
  private readonly bySignIn = new Map<string, Set<WebSocket>>();
  private unlisten: (() => Promise<void>) | undefined;

  constructor(
    private readonly deps: {
      gateway: () => SshGateway;
      tickets: () => TerminalTickets;
      users: () => UserService;
      cache: () => Cache;
      preAuthSeconds: number;
      /** Whether X-Forwarded-For names the client (http.trustProxy), as for REST calls. */
      trustProxy: boolean;
      log: Logger;
    },
  ) {}

  /** Hears of sign-ins ended on any instance, and closes the terminals they opened here. */
  async listen(): Promise<void> {
    this.unlisten = await this.deps.cache().subscribe(SIGN_IN_ENDED, (signIn) => {
      for (const ws of this.bySignIn.get(signIn) ?? []) this.fail(ws, 'you signed out');
    });
  }

  private track(ws: WebSocket, signIn: string): void {
    const open = this.bySignIn.get(signIn) ?? new Set<WebSocket>();
    open.add(ws);
    this.bySignIn.set(signIn, open);
    ws.once('close', () => {
      open.delete(ws);
      if (open.size === 0 && this.bySignIn.get(signIn) === open) this.bySignIn.delete(signIn);
    });
  }

  readonly upgrade = async (req: IncomingMessage, socket: Duplex, head: Buffer): Promise<boolean> => {
    const url = new URL(req.url ?? '/', 'http://gateway');
    if (url.pathname !== WEB_TERMINAL_PATH) return false;
    // A store or cache that cannot answer is the server's trouble, not a bad sign-in: 503, as REST calls answer.
    const unavailable = () => {
      refuse(socket, 503, 'the server cannot reach its store right now; try again shortly');
      return true;
    };
    const ip = clientAddress(req, this.deps.trustProxy);
    const refusedFor = await this.deps.gateway().signIns.sourceRefusedFor(ip);
    if (refusedFor > 0) {
      refuse(
        socket,
        429,
        `too many failed sign-ins from ${ip}; try again in ${refusedFor} seconds`,
        `Retry-After: ${refusedFor}\r\n`,
      );
      return true;
    }
    let grant: Awaited<ReturnType<TerminalTickets['redeem']>>;
    try {
      grant = await this.deps.tickets().redeem(url.searchParams.get('ticket') ?? '');
    } catch {
      return unavailable();
    }
    if (!grant) {
      refuse(socket, 401, 'missing, used or expired ticket; POST /api/terminal/tickets gives one');
      return true;
    }
    // The ticket stands for the token it was issued to: a password change, a sign-out or a disabled account since
    // then voids it, exactly as it voids the token on REST calls.
    let caller: UserCaller;
    try {
      caller = await this.deps.users().callerFor({
        kind: 'user',
        sub: grant.sub,
        tenant: grant.tenant,
        pwd: grant.issued,
        sid: grant.signIn,
      });
    } catch (err) {
      if (!(err instanceof Unauthorized)) return unavailable();
      refuse(socket, 401, 'the sign-in behind this ticket is no longer valid');
      return true;
    }
    if (!caller.role || caller.tenantId !== grant.tenant) {
      refuse(socket, 403, 'not a member of this namespace');
      return true;
    }
    const { target, tenant, signIn } = grant;
    const cols = size(url.searchParams.get('cols'), 80);
    const rows = size(url.searchParams.get('rows'), 24);
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      this.sockets.add(ws);
      ws.once('close', () => this.sockets.delete(ws));
      this.track(ws, signIn);
      this.serve(ws, { target, tenant, cols, rows, ip }).catch((err: unknown) => {
        this.deps.log.error({ err }, 'web terminal failed');
        this.fail(ws, 'the gateway could not open the session');
      });
    });
    return true;
  };

  private fail(ws: WebSocket, message: string): void {
    if (ws.readyState === ws.OPEN) {
      ws.send(JSON.stringify({ type: 'error', message }));
      ws.close(4000, message.slice(0, 120));
    }
  }

  private async serve(
    ws: WebSocket,
    opts: { target: string; tenant: string; cols: number; rows: number; ip: string },
  ): Promise<void> {
    let cols = opts.cols;
    let rows = opts.rows;
    const early: Buffer[] = [];
    let channel: TargetSession | undefined;
    let admitted: Admitted | undefined;
    // Sign-in frames ('auth', then 'signature' for a key) wait here until the step that reads them.
    const pending: Frame[] = [];
    let deliver: (() => void) | undefined;
    ws.on('message', (data: RawData, binary: boolean) => {
      const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as Buffer);
      if (binary) {
        if (channel) channel.stdin.write(buf);
        else early.push(buf);
        return;
      }
      if (buf.length > MAX_CONTROL) return this.fail(ws, 'control frame too large');
      let frame: Frame;
      try {
        frame = JSON.parse(buf.toString('utf8'));
      } catch {
        return;
      }
      if (!frame || typeof frame !== 'object') return;
      if (frame.type === 'auth' || frame.type === 'signature') {
        if (pending.length < 4) pending.push(frame);
        deliver?.();
      } else if (frame.type === 'resize') {
        cols = size(String(frame.cols), cols);
        rows = size(String(frame.rows), rows);
        channel?.resize({ cols, rows, width: 0, height: 0 });
        if (admitted) {
          admitted.journal.event('window-change', 0, { cols, rows });
          if (admitted.record) admitted.journal.resize(0, cols, rows);
        }
      }
    });
    // The pre-auth timeout covers the whole sign-in, from the upgrade to the device's answer.
    const deadline = Date.now() + this.deps.preAuthSeconds * 1000;
    const next = (type: string) =>
      new Promise<Frame | undefined>((resolve) => {
        const look = () => {
          const i = pending.findIndex((f) => f.type === type);
          if (i === -1) return false;
          clearTimeout(timer);
          deliver = undefined;
          resolve(pending.splice(i, 1)[0]);
          return true;
        };
        const timer = setTimeout(() => resolve(undefined), Math.max(0, deadline - Date.now()));
        ws.once('close', () => {
          clearTimeout(timer);
          resolve(undefined);
        });
        if (!look()) deliver = look;
      });

    const gateway = this.deps.gateway();
    const a = await admit(gateway.admission, opts.target, { ip: opts.ip, type: 'web', tenant: opts.tenant });
    if (!a.ok) return this.fail(ws, a.message.replace(/^gatehouse: /, ''));
    const refuse = (message: string, event?: { type: string; data: object }) => {
      if (event) a.journal.event(event.type, 0, event.data);
      void a.journal.end();
      this.fail(ws, message);
    };
    /** A wrong password or signature: penalties as through the SSH gateway, then the answer, after the slowdown. */
    const failed = async (message: string, event: { type: string; data: object }, paused?: string) => {
      const earned = await gateway.signIns.failed(opts.ip, a.target, opts.target, paused);
      if (earned.delayMs > 0) await sleep(earned.delayMs);
      refuse(earned.refusal ?? message, event);
    };
    const auth = await next('auth');
    if (!auth) return refuse('no password or key was given in time');

    let credential: UpstreamAuth;
    let method: 'password' | 'publickey';
    let fingerprint: string | undefined;
    if (auth.method === 'publickey') {
      method = 'publickey';
      const key = typeof auth.key === 'string' ? parseOfferedKey(auth.key) : undefined;
      if (!key) return refuse('the public key could not be read');
      fingerprint = md5Fingerprint(key.blob);
      if (!(await admitsKey(gateway.admission, a, fingerprint)))
        return refuse(
          `this key is not among the namespace's public keys for ${a.user} on ${a.device.name}; add it under Public keys`,
          { type: 'auth-failed', data: { method, fingerprint } },
        );
      // Only now that the key would do: the browser signs a fresh nonce and sends back nothing but the signature.
      const nonce = newNonce();
      ws.send(
        JSON.stringify({
          type: 'challenge',
          namespace: SIGNATURE_NAMESPACE,
          nonce: nonce.toString('base64'),
        }),
      );
      const answer = await next('signature');
      if (!answer) return refuse('no signature was given in time');
      if (typeof answer.signature !== 'string' || !verifyProof(key, nonce, answer.signature))
        return failed('the signature does not match the key', {
          type: 'auth-failed',
          data: { method, fingerprint },
        });
      credential = { gatewayKey: true };
    } else if (typeof auth.password === 'string') {
      method = 'password';
      credential = { password: auth.password };
      const paused = await gateway.signIns.passwordsPaused(a.target, opts.target);
      if (paused) return failed(paused, { type: 'refused', data: { reason: 'paused' } }, paused);
    } else {
      return refuse('the sign-in frame names no password or key');
    }
    let upstream: Upstream;
    try {
      upstream = await gateway.upstream(a, credential);
    } catch (err) {
      if (err instanceof UpstreamRefused)
        return failed(method === 'password' ? 'wrong user name or password' : 'the device refused the key', {
          type: 'auth-failed',
          data: { method, ...(fingerprint ? { fingerprint } : {}) },
        });
      return refuse('the device is not reachable now', { type: 'refused', data: { reason: 'unreachable' } });
    }
    admitted = a;
    a.journal.event('authenticated', 0, { method, ...(fingerprint ? { fingerprint } : {}) });
    a.journal.update({ authenticated: true, term: 'xterm-256color' });
    const end = (notice?: string) => {
      // The notice is terminal output, shown above the closed-session message.
      if (notice !== undefined && ws.readyState === ws.OPEN) ws.send(Buffer.from(`\r\n${notice}\r\n`));
      upstream.end();
      if (ws.readyState === ws.OPEN) ws.close(1000, 'closed');
    };
    // The browser's terminal shows who starts and stops watching a recorded session, as an SSH client's does.
    const say = (line: string) => {
      if (ws.readyState === ws.OPEN) ws.send(Buffer.from(`\r\n${line}\r\n`));
    };
    gateway.live.add(a.journal.uid, end, a.record ? { journal: a.journal, say } : undefined);
    ws.once('close', () => {
      upstream.end();
      gateway.live.delete(a.journal.uid);
      void a.journal.end();
    });
    upstream.onClose(() => {
      if (ws.readyState === ws.OPEN) ws.close(1000, 'closed');
    });
    a.journal.event('pty-req', 0, { term: 'xterm-256color', cols, rows });
    a.journal.event('shell', 0);
    let session: TargetSession;
    try {
      session = await upstream.open({
        command: { kind: 'shell' },
        pty: { term: 'xterm-256color', cols, rows, width: 0, height: 0 },
        env: {},
        agentForward: false,
      });
    } catch {
      return this.fail(ws, 'the device refused the shell');
    }
    channel = session;
    if (a.record) {
      a.journal.update({ recorded: true });
      a.journal.resize(0, cols, rows);
    }
    if (a.announcement) ws.send(Buffer.from(`${a.announcement.replace(/\r?\n/g, '\r\n')}\r\n`));
    for (const b of early.splice(0)) session.stdin.write(b);
    // The device's output is held while the browser has not taken what was sent (a slow link, a stalled tab) and
    // while the recording waits for the store (journal.ts): without this a fast printer filled the server's memory.
    let holds = 0;
    const hold = (): (() => void) => {
      if (holds++ === 0) {
        session.stdout.pause();
        session.stderr.pause();
      }
      let released = false;
      return () => {
        if (released) return;
        released = true;
        if (--holds === 0) {
          session.stdout.resume();
          session.stderr.resume();
        }
      };
    };
    let unsent = 0;
    let browserHold: (() => void) | undefined;
    let storeHold = false;
    const out = (chunk: Buffer) => {
      if (a.record) {
        a.journal.output(0, chunk, cols, rows);
        if (a.journal.behind && !storeHold) {
          storeHold = true;
          const release = hold();
          void a.journal.caughtUp().then(() => {
            storeHold = false;
            release();
          });
        }
      }
      unsent += chunk.length;
      if (unsent > BROWSER_PAUSE_ABOVE) browserHold ??= hold();
      ws.send(chunk, () => {
        unsent -= chunk.length;
        if (browserHold && unsent < BROWSER_RESUME_BELOW) {
          browserHold();
          browserHold = undefined;
        }
      });
    };
    session.stdout.on('data', out);
    session.stderr.on('data', out);
    session.onExit((exit) => {
      // The same shape as SSH sessions' exits (bridge.ts): {code}, or {signal, core, description}.
      a.journal.event('code' in exit ? 'exit-status' : 'exit-signal', 0, exit);
      if (ws.readyState === ws.OPEN) {
        ws.send(JSON.stringify({ type: 'exit', code: 'code' in exit ? exit.code : undefined }));
      }
    });
    session.onClose(() => {
      if (ws.readyState === ws.OPEN) ws.close(1000, 'session ended');
      upstream.end();
    });
  }

  async stop(): Promise<void> {
    await this.unlisten?.();
    this.unlisten = undefined;
    for (const ws of this.sockets) ws.terminate();
    this.wss.close();
  }
}
