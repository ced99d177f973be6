import type { Duplex } from 'node:stream';
import {
  type Cache,
  type Config,
  type Hooks,
  type Logger,
  parseSshId,
  printable,
  type SshConnectionHandler,
  SshPenalties,
} from '@gatehouse/core';
import ssh2, { type AuthContext, type Connection, type PublicKeyAuthContext, type ServerChannel } from 'ssh2';
import type { TunnelHub } from '../agent-tunnels/hub';
import type { DeviceService } from '../devices/service';
import type { FirewallService } from '../firewall/service';
import type { NamespaceService } from '../namespaces/service';
import type { SessionService } from '../sessions/service';
import { md5Fingerprint } from '../sshkeys/fingerprint';
import type { GatewaySigner } from '../sshkeys/gateway-signer';
import type { PublicKeyService } from '../sshkeys/service';
import { type Admission, type AdmissionDeps, type Admitted, admit, admitsKey } from './admission';
import { UserAgentRelay } from './agent-forwarding';
import { AgentTunnelDialer } from './agent-upstream';
import { sendBanner } from './banner';
import { bridgeSession } from './bridge';
import type { LiveSessions } from './live';
import { SignInPenalties, sleep } from './sign-in-penalties';
import {
  HostKeyMismatch,
  type Upstream,
  type UpstreamAuth,
  type UpstreamDialer,
  UpstreamRefused,
} from './upstream';

const METHODS: Array<'publickey' | 'password'> = ['publickey', 'password'];

/** What the SSH gateway works with, passed in where it is built (gateway/index.ts). */
export interface SshGatewayDeps {
  config: Config;
  log: Logger;
  devices: DeviceService;
  tunnelHub: TunnelHub;
  namespaces: NamespaceService;
  firewall: FirewallService;
  sessions: SessionService;
  publicKeys: PublicKeyService;
  gatewaySigner: GatewaySigner;
  liveSessions: LiveSessions;
  sshPenalties: SshPenalties;
  cache: Cache;
  hooks: Hooks;
}

/**
 * The SSH gateway (see docs/content/developers/gateway.md): core's SSH listener hands it each connection. It admits the connection
 * (target, device state, firewall, and the public key offered), signs in on the device through an upstream with the
 * user's password or, for a public key the namespace allows, with the gateway key, then bridges every channel. The
 * web terminal signs in through it too.
 */
export class SshGateway implements SshConnectionHandler {
  readonly admission: AdmissionDeps;
  readonly config: Config;
  readonly log: Logger;
  readonly live: LiveSessions;
  readonly penalties: SshPenalties;
  /** What failed sign-ins earn, through this gateway and the web terminal alike. */
  readonly signIns: SignInPenalties;
  /** Asked in order; the agent tunnel, last, reaches every agent's device. */
  private readonly dialers: UpstreamDialer[];

  constructor(deps: SshGatewayDeps) {
    this.config = deps.config;
    this.log = deps.log.child({ part: 'gateway' });
    this.live = deps.liveSessions;
    this.penalties = deps.sshPenalties;
    this.signIns = new SignInPenalties(deps.sshPenalties, this.log);
    this.dialers = [new AgentTunnelDialer(deps.tunnelHub, deps.gatewaySigner, this.log)];
    this.admission = {
      devices: deps.devices,
      tunnels: deps.tunnelHub,
      namespaces: deps.namespaces,
      firewall: deps.firewall,
      publicKeys: deps.publicKeys,
      sessions: deps.sessions,
      hooks: deps.hooks,
      log: this.log,
      instance: deps.liveSessions.instance,
      keepRefusal: async (tenantId, ip) => {
        const budget = deps.config.ssh.refusedSessionsPerMinute;
        if (budget === 0) return false;
        // Counted until a minute after the source's last refused attempt.
        return (await deps.cache.incr(`ssh:refused:${tenantId}:${SshPenalties.source(ip)}`, 60)) <= budget;
      },
      online: async (device) => this.dialers.find((d) => d.reaches(device))?.online?.(device),
    };
  }

  /**
   * Adds a kind of target (a plugin's container exec, say), asked before the ones already there: it answers for
   * the devices its `reaches` claims, and the agent tunnel for the rest.
   */
  addDialer(dialer: UpstreamDialer): void {
    this.dialers.unshift(dialer);
  }

  handle(conn: Connection, info: { ip: string; port: number }): void {
    new GatewayConnection(this, conn, info.ip.replace(/^::ffff:/, ''));
  }

  /** Signs in on the admitted device through the first upstream that reaches it. */
  upstream(a: Admitted, auth: UpstreamAuth, agent?: ssh2.BaseAgent): Promise<Upstream> {
    const dialer = this.dialers.find((d) => d.reaches(a.device));
    if (!dialer) return Promise.reject(new Error(`no upstream reaches device ${a.device.uid}`));
    return dialer.dial(a.device, a.user, auth, agent);
  }
}

/**
 * The first answer to a failed sign-in leaves no sooner than this after the attempt arrived, the next ones at twice
 * as long and so on, each at the first of these steps the work behind it has passed (as OpenSSH pads its own failed
 * sign-ins): a wrong password that went to the device and back, and an address that names nothing, take alike.
 */
const FAILURE_STEP_MS = 250;
/** How long a closed session's notice has to reach the client before the connection goes. */
const NOTICE_MS = 200;

/**
 * What a user who has not signed in is told of any failed sign-in, whatever the reason (RefusalReason): a wrong
 * password and an address that names no reachable device get the same words.
 */
const NOT_SIGNED_IN =
  'gatehouse: not signed in: the password or key is not accepted, or this address names no device you can reach ' +
  'now (unknown, not accepted, offline, or denied by a firewall rule). Sign in with a key of the namespace, or see ' +
  'the device in the console, to be told which.';

/** One user connection through the gateway, from the first sign-in attempt to the close. */
class GatewayConnection {
  private admission: Promise<Admission> | undefined;
  private username: string | undefined;
  private upstream: Upstream | undefined;
  private refused = false;
  /** NOT_SIGNED_IN was sent (once a connection). */
  private hinted = false;
  private seats = 0;
  private lastActivity = Date.now();
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly relay: UserAgentRelay;

  constructor(
    private readonly gw: SshGateway,
    private readonly conn: Connection,
    private readonly ip: string,
  ) {
    this.relay = new UserAgentRelay(conn);
    // Every piece of a connection's work ends in a catch that logs and closes this connection only: a failure
    // (the store away, a device that misbehaves) must never become an error that ends the server.
    conn.on('authentication', (ctx) => {
      this.authenticate(ctx).catch((err: unknown) => {
        gw.log.error({ err, ip }, 'gateway sign-in failed');
        this.refuse(ctx, 'gatehouse: the gateway could not complete the sign-in; try again');
      });
    });
    conn.once('ready', () => {
      this.ready().catch((err: unknown) => this.fail(err, 'gateway session failed'));
    });
    conn.once('close', () => {
      try {
        this.closed();
      } catch (err) {
        this.fail(err, 'gateway close failed');
      }
    });
  }

  private fail(err: unknown, what: string): void {
    this.gw.log.error({ err, ip: this.ip }, what);
    this.conn.end();
  }

  /**
   * The admission of this connection, asked once. It never rejects: a failure is logged and answered as a refusal,
   * so the promise is safe to await wherever the connection's later steps need it.
   */
  private admitOnce(username: string): Promise<Admission> {
    if (!this.admission) {
      const started = Date.now();
      this.admission = admit(this.gw.admission, username, { ip: this.ip, type: 'term' }).then(
        (a) => {
          this.gw.log.debug(
            { ip: this.ip, admitted: a.ok, ms: Date.now() - started },
            'ssh sign-in admission',
          );
          return a;
        },
        (err: unknown): Admission => {
          this.gw.log.error({ err, ip: this.ip }, 'gateway sign-in failed');
          return {
            ok: false,
            reason: 'error',
            message: 'gatehouse: the gateway could not complete the sign-in; try again',
          };
        },
      );
    }
    return this.admission;
  }

  private refuse(ctx: AuthContext, message: string): void {
    if (!this.refused) {
      this.refused = true;
      sendBanner(this.conn, message);
    }
    ctx.reject([]);
    // Give the client a moment to print the banner and the refusal before the socket closes.
    setTimeout(() => this.conn.end(), 200).unref();
  }

  /**
   * Answers each attempt. Before the user has signed in, nothing the gateway says depends on what the address
   * names: the method list is answered at once, every public key offered is one that would do (RFC 4252 section
   * 7; whether it is allowed is decided when the client proves it holds it), and every failure, whatever its
   * reason, is answered alike (`failed`, `notAllowed`). A key of the namespace allowed for the device signs the
   * user in; only then is a device that cannot be reached named, with its reason.
   */
  private async authenticate(ctx: AuthContext): Promise<void> {
    if (this.username !== undefined && this.username !== ctx.username) {
      return this.refuse(ctx, 'gatehouse: the user name may not change between sign-in attempts');
    }
    this.username = ctx.username;
    this.gw.log.debug({ ip: this.ip, user: ctx.username, method: ctx.method }, 'ssh sign-in attempt');
    const started = Date.now();
    const admission = this.admitOnce(ctx.username);
    // An address that parses as none says nothing of what exists: told at once (admission needs no query for it).
    if (!parseSshId(ctx.username)) {
      const a = await admission;
      return a.ok ? ctx.reject(METHODS) : this.refuse(ctx, a.message);
    }
    if (this.upstream) return ctx.reject(METHODS);
    if (ctx.method === 'password') return this.password(ctx, ctx.password, await admission, started);
    if (ctx.method === 'publickey') {
      // A key of a kind the gateway cannot check (a FIDO key) would never do: refused at once, for any address.
      const parsed = ssh2.utils.parseKey(ctx.key.data);
      const key = Array.isArray(parsed) ? parsed[0] : parsed;
      if (!key || key instanceof Error) return ctx.reject(METHODS);
      const { signature, blob } = ctx;
      if (!signature || !blob) return ctx.accept();
      return this.publicKey(ctx, key, { signature, blob }, await admission, started);
    }
    ctx.reject(METHODS);
  }

  private async password(ctx: AuthContext, password: string, a: Admission, started: number): Promise<void> {
    if (!a.ok && a.reason === 'error') return this.refuse(ctx, a.message);
    const paused = await this.gw.signIns.passwordsPaused(a.target, this.label());
    if (paused) return this.failed(ctx, a, started, paused);
    if (!a.ok) return this.failed(ctx, a, started);
    return this.signIn(ctx, a, { password }, 'password', started);
  }

  private async publicKey(
    ctx: PublicKeyAuthContext,
    key: ssh2.ParsedKey,
    proof: { signature: Buffer; blob: Buffer },
    a: Admission,
    started: number,
  ): Promise<void> {
    if (!a.ok && a.reason === 'error') return this.refuse(ctx, a.message);
    const fingerprint = md5Fingerprint(ctx.key.data);
    if (key.verify(proof.blob, proof.signature, ctx.hashAlgo) !== true) {
      if (a.ok) a.journal.event('auth-failed', 0, { method: 'publickey', fingerprint });
      return this.failed(ctx, a, started);
    }
    const device = a.device;
    const user = a.user;
    if (!device || user === undefined || !(await admitsKey(this.gw.admission, { user, device }, fingerprint)))
      return this.notAllowed(ctx, started);
    // Signed in with a key of the namespace: the user may now be told why the device cannot be reached.
    if (!a.ok) return this.refuse(ctx, a.message);
    return this.signIn(ctx, a, { gatewayKey: true }, 'publickey', started, fingerprint);
  }

  /** The address as the user typed it, safe to echo. */
  private label(): string {
    return printable(this.username ?? '');
  }

  /** Waits until the first of the FAILURE_STEP_MS steps since `started` that the work so far has not passed. */
  private async padded(started: number): Promise<void> {
    const spent = Date.now() - started;
    let step = FAILURE_STEP_MS;
    while (step <= spent) step *= 2;
    await sleep(step - spent);
  }

  /** The answer to every failure before sign-in: the same words, then the same method list. */
  private rejectNotSignedIn(ctx: AuthContext): void {
    if (!this.hinted) {
      this.hinted = true;
      sendBanner(this.conn, NOT_SIGNED_IN);
    }
    ctx.reject(METHODS);
  }

  /**
   * A failed password or key signature, or a password for a target that is not admitted or whose passwords are
   * paused: the source and the target earn penalties (sign-in-penalties.ts), the failure is answered as late as the
   * padding and the source's slowdown say, and a source or target now refused is told so and this connection
   * closed (a refused source's next connections are refused at accept).
   */
  private async failed(ctx: AuthContext, a: Admission, started: number, paused?: string): Promise<void> {
    const { delayMs, refusal } = await this.gw.signIns.failed(this.ip, a.target, this.label(), paused);
    await this.padded(started);
    if (delayMs > 0) await sleep(delayMs);
    if (refusal) return this.refuse(ctx, `gatehouse: ${refusal}`);
    this.rejectNotSignedIn(ctx);
  }

  /** A key proved but not allowed here (or no device here): no guess, so no penalty, but the same answer. */
  private async notAllowed(ctx: AuthContext, started: number): Promise<void> {
    await this.padded(started);
    this.rejectNotSignedIn(ctx);
  }

  private async signIn(
    ctx: AuthContext,
    a: Admitted,
    auth: UpstreamAuth,
    method: string,
    attempted: number,
    fingerprint?: string,
  ): Promise<void> {
    const started = Date.now();
    const log = this.gw.log;
    log.debug({ ip: this.ip, device: a.device.uid, method }, 'signing in on the device');
    try {
      this.upstream = await this.gw.upstream(a, auth, this.relay);
      log.debug({ ip: this.ip, device: a.device.uid, ms: Date.now() - started }, 'signed in on the device');
    } catch (err) {
      log.debug(
        { ip: this.ip, device: a.device.uid, ms: Date.now() - started, err: (err as Error).message },
        'sign-in on the device failed',
      );
      if (err instanceof UpstreamRefused) {
        a.journal.event('auth-failed', 0, { method, ...(fingerprint ? { fingerprint } : {}) });
        return this.failed(ctx, a, attempted);
      }
      if (err instanceof HostKeyMismatch) {
        this.gw.log.warn({ device: a.device.uid, ip: this.ip }, 'device host key mismatch: sign-in refused');
        a.journal.event('refused', 0, { reason: 'host-key' });
        return this.refuse(
          ctx,
          `gatehouse: device ${a.device.namespace}.${a.device.name} answered with a host key that is not its ` +
            'registered key; the sign-in was stopped before any credential was sent',
        );
      }
      this.gw.log.warn({ err: (err as Error).message, device: a.device.uid }, 'device unreachable');
      a.journal.event('refused', 0, { reason: 'unreachable' });
      return this.refuse(
        ctx,
        `gatehouse: device ${a.device.namespace}.${a.device.name} is not reachable now`,
      );
    }
    a.journal.event('authenticated', 0, { method, ...(fingerprint ? { fingerprint } : {}) });
    a.journal.update({ authenticated: true });
    ctx.accept();
  }

  private async ready(): Promise<void> {
    this.gw.log.debug({ ip: this.ip }, 'ssh connection ready');
    const a = this.admission ? await this.admission : undefined;
    const upstream = this.upstream;
    if (!a?.ok || !upstream) {
      this.conn.end();
      return;
    }
    const { conn } = this;
    const channels = new Set<ServerChannel>();
    const notices = new Set<(line: string) => void>();
    const watch = a.record
      ? {
          journal: a.journal,
          say: (line: string) => {
            for (const say of notices) say(line);
          },
        }
      : undefined;
    this.gw.live.add(
      a.journal.uid,
      (notice) => {
        if (notice === undefined) {
          upstream.end();
          conn.end();
          return;
        }
        // The person at the client reads why before the connection goes (on standard error, where ssh prints it).
        for (const channel of channels) channel.stderr.write(`\r\n${notice}\r\n`);
        setTimeout(() => {
          upstream.end();
          conn.end();
        }, NOTICE_MS).unref();
      },
      watch,
    );
    upstream.onClose(() => conn.end());
    const touch = () => {
      this.lastActivity = Date.now();
    };
    this.startIdleTimer();

    conn.on(
      'session',
      this.guard((accept) => {
        this.gw.log.debug({ ip: this.ip, seat: this.seats }, 'ssh session channel');
        bridgeSession(accept(), {
          upstream,
          seat: this.seats++,
          journal: a.journal,
          record: a.record,
          announcement: a.announcement,
          agentRelay: true,
          touch,
          log: this.gw.log,
          channels,
          notices,
        });
      }),
    );
    const { forwarding } = upstream;
    // ssh -L and -D: direct-tcpip channels go to the same destination as seen from the device.
    conn.on(
      'tcpip',
      this.guard((accept, reject, info) => {
        if (!forwarding) return reject();
        a.journal.event('direct-tcpip', 0, { host: info.destIP, port: info.destPort });
        forwarding
          .connect({ ip: info.srcIP, port: info.srcPort }, { host: info.destIP, port: info.destPort })
          .then(
            (up) => {
              const down = accept();
              splice(up, down);
              up.on('data', touch);
              down.on('data', touch);
            },
            () => reject(),
          )
          .catch((err: unknown) => this.fail(err, 'gateway channel failed'));
      }),
    );
    // ssh -R: asked of the device; when it refuses, OpenSSH tells the user the forwarding failed.
    conn.on(
      'request',
      this.guard((accept, reject, name, info) => {
        if (!forwarding) return reject?.();
        if (name === 'tcpip-forward') {
          forwarding
            .listen(info.bindAddr, info.bindPort)
            .then(
              (port) => {
                a.journal.event('tcpip-forward', 0, { address: info.bindAddr, port });
                accept?.(port);
              },
              () => reject?.(),
            )
            .catch((err: unknown) => this.fail(err, 'gateway channel failed'));
        } else if (name === 'cancel-tcpip-forward') {
          forwarding.unlisten(info.bindAddr, info.bindPort).then(
            () => accept?.(),
            () => reject?.(),
          );
        } else reject?.();
      }),
    );
    forwarding?.onIncoming(
      this.guard((info, accept, reject) => {
        conn.forwardOut(info.destIP, info.destPort, info.srcIP, info.srcPort, (err, down) => {
          if (err) return reject();
          accept().then(
            (up) => splice(up, down),
            () => down.destroy(),
          );
        });
      }),
    );
  }

  /** A handler whose throw closes this connection (logged) instead of escaping to the event loop. */
  private guard<A extends unknown[]>(handler: (...args: A) => void): (...args: A) => void {
    return (...args: A) => {
      try {
        handler(...args);
      } catch (err) {
        this.fail(err, 'gateway channel failed');
      }
    };
  }

  private startIdleTimer(): void {
    const idle = this.gw.config.ssh.idleTimeout;
    if (!idle) return;
    this.idleTimer = setInterval(
      () => {
        if (Date.now() - this.lastActivity >= idle * 1000) this.conn.end();
      },
      Math.min(idle * 1000, 30_000),
    );
    this.idleTimer.unref();
  }

  private closed(): void {
    if (this.idleTimer) clearInterval(this.idleTimer);
    this.upstream?.end();
    this.admission
      ?.then((a) => {
        if (!a.ok) return;
        this.gw.live.delete(a.journal.uid);
        return a.journal.end();
      })
      .catch((err: unknown) => this.gw.log.error({ err, ip: this.ip }, 'gateway session close failed'));
  }
}

/** Joins two forwarded channels both ways; an error on either closes both (an unheard 'error' would be thrown). */
function splice(up: Duplex, down: Duplex): void {
  up.pipe(down).pipe(up);
  up.on('error', () => down.destroy());
  down.on('error', () => up.destroy());
  up.on('close', () => down.destroy());
  down.on('close', () => up.destroy());
}
