import type { KeyObject } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { WebSocket } from 'ws';
import { type AgentConfig, offersSessionProtocol, tunnelIsPrivate } from './config';
import { connectDeviceNetwork } from './device-network';
import { deviceHostname, deviceInfo, loadOrCreateDeviceKey, primaryMac } from './identity';
import type { AgentLog } from './log';
import { type MuxSession, SESSION_STREAM_KINDS, serveTunnel, TUNNEL_MAX_MESSAGE } from './mux';
import { STREAM_KINDS_HEADER } from './protocol';
import {
  authenticateDevice,
  type DeviceAuthRequest,
  type DeviceAuthResult,
  fetchServerInfo,
  ServerClock,
  ServerRefusal,
  signedHeaders,
  signGatewayBlob,
  waitForAcceptance,
} from './registration';
import { SessionProtocolServer } from './sessions/server';
import { DeviceSignIn } from './sign-in';
import { AgentSshServer } from './ssh/server';
import { AGENT_VERSION } from './version';

/** Reconnect delays: full jitter over an exponential ceiling, so a restarted server is not hit in lockstep. */
export function backoffDelayMs(attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(60_000, 1000 * 2 ** Math.min(attempt, 16));
  return Math.round(random() * ceiling);
}

type Outcome = 'was-online' | 'pending' | 'waiting-acceptance' | 'failed';

/** Longest acceptance wait the agent asks the server to hold (kept under proxies' usual 60 s idle timeout). */
const ACCEPTANCE_WAIT_SECONDS = 25;

/**
 * The agent's life: register, keep one tunnel up, serve what the server opens over it,
 * and come back after any failure until told to stop.
 */
export class DeviceAgent {
  private readonly config: AgentConfig;
  private readonly log: AgentLog;
  private ssh: AgentSshServer | undefined;
  private sessions: SessionProtocolServer | undefined;
  private authRequest: DeviceAuthRequest | undefined;
  private signingKey: KeyObject | undefined;
  private readonly clock = new ServerClock();
  private token: string | undefined;
  private tunnel: MuxSession | undefined;
  private socket: WebSocket | undefined;
  private stopping = false;
  private wake: (() => void) | undefined;
  private running: Promise<void> | undefined;

  constructor(config: AgentConfig, log: AgentLog) {
    this.config = config;
    this.log = log;
  }

  async start(): Promise<void> {
    const { config, log } = this;
    const { key, created } = await loadOrCreateDeviceKey(config.privateKeyPath);
    if (created) log.info(`created device key ${config.privateKeyPath}`);
    const mac = config.preferredIdentity ?? primaryMac();
    if (!mac) {
      throw new Error(
        'no network interface with a MAC address; set GATEHOUSE_PREFERRED_IDENTITY to identify this device',
      );
    }
    const hostname = deviceHostname(config.preferredHostname);
    this.signingKey = key.signingKey;
    this.authRequest = {
      info: deviceInfo(),
      sessions: [],
      hostname,
      identity: { mac },
      public_key: key.publicKey,
      tenant_id: config.tenantId,
      ...(config.installKey ? { install_key: config.installKey } : {}),
    };
    this.ssh = new AgentSshServer({
      hostKey: key.privateKey,
      singleUserPassword: config.singleUserPassword,
      gatewaySigner: (body) => {
        if (!this.token) return Promise.reject(new Error('not registered'));
        return signGatewayBlob(config.serverAddress, this.token, body);
      },
      log: (message) => log.info(message),
    });
    if (offersSessionProtocol(config)) {
      this.sessions = new SessionProtocolServer({
        signIn: new DeviceSignIn({ singleUserPassword: config.singleUserPassword }),
        log: (message) => log.info(message),
      });
    }
    const mode = config.singleUserPassword !== undefined ? 'single-user' : 'local accounts';
    log.info(
      `gatehouse-agent ${AGENT_VERSION} starting: server ${config.serverAddress.origin}, ` +
        `hostname ${hostname}, identity ${mac}, ${this.authRequest.info.platform}, sign-in by ${mode}, ` +
        `sessions over ${this.sessions ? 'the session protocol' : 'SSH'}, ` +
        `${config.installKey ? 'with' : 'without'} an install key`,
    );
    try {
      const info = await fetchServerInfo(config.serverAddress, AGENT_VERSION, this.clock);
      log.info(`server version ${info.version}`);
    } catch (error) {
      log.warn(`server info unavailable: ${describeError(error)}`);
    }
    this.running = this.run();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    this.tunnel?.close();
    this.socket?.terminate();
    this.ssh?.close();
    this.sessions?.close();
    // A registration call in flight may take its full timeout; shutdown does not wait for it.
    await Promise.race([this.running, new Promise((resolve) => setTimeout(resolve, 3000).unref())]);
  }

  private async run(): Promise<void> {
    let attempt = 0;
    while (!this.stopping) {
      const outcome = await this.connectOnce();
      if (this.stopping) break;
      let delay: number;
      if (outcome === 'was-online') {
        attempt = 0;
        delay = backoffDelayMs(0);
      } else if (outcome === 'pending' && (await this.waitForAcceptance())) {
        // The server answered the wait: accepted (dial now), or still pending after the wait (register again,
        // which is also the availability signal).
        continue;
      } else if (outcome === 'pending' || outcome === 'waiting-acceptance') {
        // Come back about once per interval, so acceptance shows within one interval.
        delay = Math.round(this.config.keepaliveInterval * 1000 * (0.8 + 0.4 * Math.random()));
      } else {
        delay = backoffDelayMs(attempt++);
      }
      this.log.info(`next attempt in ${(delay / 1000).toFixed(1)} s`);
      await this.sleep(delay);
    }
  }

  /**
   * Holds `GET /api/devices/auth/wait` so an acceptance reaches this agent at once (issue 12, item 3). True when
   * the server held the wait or answered a new status; false when it cannot (a server without the call, an
   * error, or one busy enough to answer "pending" at once): the agent then keeps its timer.
   */
  private async waitForAcceptance(): Promise<boolean> {
    if (!this.token || this.stopping) return false;
    const seconds = Math.max(1, Math.min(ACCEPTANCE_WAIT_SECONDS, this.config.keepaliveInterval));
    const abort = new AbortController();
    this.wake = () => abort.abort();
    const started = Date.now();
    try {
      const status = await waitForAcceptance(this.config.serverAddress, this.token, seconds, abort.signal);
      if (status !== 'pending') {
        this.log.info(`device is ${status}; connecting`);
        return true;
      }
      return Date.now() - started >= 1000;
    } catch (error) {
      if (!this.stopping) this.log.warn(`acceptance wait unavailable: ${describeError(error)}`);
      return false;
    } finally {
      this.wake = undefined;
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }

  private async authenticate(): Promise<DeviceAuthResult> {
    const result = await authenticateDevice(
      this.config.serverAddress,
      this.authRequest!,
      this.signingKey!,
      this.clock,
    );
    this.token = result.token;
    return result;
  }

  private async connectOnce(): Promise<Outcome> {
    const { log, config } = this;
    let auth: DeviceAuthResult;
    try {
      auth = await this.authenticate();
    } catch (error) {
      if (error instanceof ServerRefusal && error.status === 404) {
        log.error(`the server knows no namespace with tenant id ${config.tenantId} (GATEHOUSE_TENANT_ID)`);
      } else if (error instanceof ServerRefusal) {
        log.error(`the server refused the registration (${error.status}): ${error.message}`);
      } else {
        log.warn(`server unreachable at ${config.serverAddress.origin}: ${describeError(error)}`);
      }
      return 'failed';
    }
    const url = new URL('/agent/connection', config.serverAddress);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(url, {
      // The token says which device; the proof says this agent holds its key (agent protocol 2).
      headers: {
        authorization: `Bearer ${auth.token}`,
        ...signedHeaders({ purpose: 'tunnel', uid: auth.uid }, this.signingKey!, this.clock),
        // The stream kinds it serves beyond ssh and tcp: the gateway picks the session protocol by this.
        ...(this.sessions ? { [STREAM_KINDS_HEADER]: SESSION_STREAM_KINDS.join(',') } : {}),
      },
      maxPayload: TUNNEL_MAX_MESSAGE,
      perMessageDeflate: false,
      handshakeTimeout: 10_000,
      // RFC 6455 masks what a client sends so that an intermediary reading the frames cannot be fed bytes of a
      // script's choosing. Where none can read them (TLS, loopback) the mask only costs: ws masks and the server
      // unmasks every byte in JavaScript, the largest single cost of output from the device (bench/RESULTS.md).
      ...(tunnelIsPrivate(config.serverAddress) ? { generateMask: zeroMask } : {}),
    });
    this.socket = ws;
    // Bound before 'open': the server may send its first frame in the same TCP read as
    // the upgrade answer, and ws emits it at once; a listener added later would miss it.
    const tunnel = this.bindTunnel(ws);
    const opened = await new Promise<
      { ok: true } | { ok: false; status?: number; body?: string; error?: Error }
    >((resolve) => {
      ws.once('open', () => resolve({ ok: true }));
      ws.once('unexpected-response', (_request, response: IncomingMessage) => {
        readBody(response).then((body) => {
          resolve({ ok: false, status: response.statusCode, body });
          ws.terminate();
        });
      });
      ws.once('error', (error) => resolve({ ok: false, error }));
    });
    ws.on('error', () => {});
    if (!opened.ok) {
      if (opened.status === 403) {
        const status = refusedStatus(opened.body);
        if (status === 'pending') {
          log.info(`device ${auth.uid} is pending acceptance in namespace ${auth.namespace}`);
          return 'pending';
        }
        log.warn(
          `device ${auth.uid} was ${status} in namespace ${auth.namespace}; the server refuses its tunnel`,
        );
        return 'waiting-acceptance';
      }
      if (opened.status !== undefined) {
        log.warn(`the server refused the tunnel (${opened.status}): ${opened.body?.slice(0, 200) ?? ''}`);
      } else {
        log.warn(`tunnel to ${url.origin} failed: ${describeError(opened.error)}`);
      }
      return 'failed';
    }
    return this.serveUntilClosed(ws, tunnel, auth);
  }

  private bindTunnel(ws: WebSocket): MuxSession {
    return serveTunnel(ws, {
      timeoutMs: Math.max(5000, this.config.keepaliveInterval * 1000),
      onStream: async (header, stream) => {
        if (header.kind === 'ssh') {
          this.ssh!.handleStream(stream);
          return;
        }
        if (header.kind === 'tcp') return connectDeviceNetwork(header.host, header.port, stream);
        if (!this.sessions) throw new Error('this agent does not serve the session protocol');
        return this.sessions.serve(header, stream);
      },
    });
  }

  private serveUntilClosed(ws: WebSocket, tunnel: MuxSession, auth: DeviceAuthResult): Promise<Outcome> {
    const { log, config } = this;
    this.tunnel = tunnel;
    tunnel.on('protocolError', (error: Error) => log.error(`tunnel protocol error: ${error.message}`));
    log.info(`online: device ${auth.name} (${auth.uid}) in namespace ${auth.namespace}`);
    // The availability signal, and a ping so a silently dead server is noticed.
    const keepalive = setInterval(() => {
      this.authenticate().catch((error) => log.warn(`availability call failed: ${describeError(error)}`));
      tunnel.ping().catch(() => {
        log.warn('server stopped answering pings; reconnecting');
        tunnel.close();
        ws.terminate();
      });
    }, config.keepaliveInterval * 1000);
    return new Promise((resolve) => {
      tunnel.once('close', (error?: Error) => {
        clearInterval(keepalive);
        this.tunnel = undefined;
        if (!this.stopping) log.warn(`tunnel closed${error ? `: ${error.message}` : ''}`);
        resolve('was-online');
      });
    });
  }
}

/** An all-zero mask: ws then sends the payload as it is, and the server's ws skips unmasking it. */
function zeroMask(mask: Buffer): void {
  mask.fill(0);
}

function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as Error & { cause?: unknown }).cause;
  return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
}

function readBody(response: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let body = '';
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => {
      if (body.length < 4096) body += chunk;
    });
    response.on('end', () => resolve(body));
    response.on('error', () => resolve(body));
  });
}

/** The server's 403 names the device status: `{ "message": ..., "status": "pending" | "rejected" | ... }`. */
function refusedStatus(body: string | undefined): string {
  try {
    const parsed = JSON.parse(body ?? '') as { status?: unknown };
    if (typeof parsed.status === 'string') return parsed.status;
  } catch {
    // Not JSON: fall back to pending, the common reason.
  }
  return 'pending';
}
