import type { KeyObject } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { STREAM_KINDS_HEADER } from '@gatehouse/protocol/agent-proof';
import { type MuxSession, SESSION_STREAM_KINDS, type StreamHeader } from '@gatehouse/protocol/mux';
import type { WebSocket } from 'ws';
import { type AgentConfig, offersSessionProtocol } from './config';
import { connectDeviceNetwork } from './device-network';
import { deviceHostname, deviceInfo, loadOrCreateDeviceKey, primaryMac } from './identity';
import type { AgentLog } from './log';
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
import { SessionProtocolServer } from './session-protocol/server';
import { DeviceSignIn } from './sign-in';
import { AgentSshServer } from './ssh-server/server';
import { backoffDelayMs, describeError, dialTunnel } from './tunnel-socket';
import { AGENT_VERSION } from './version';

export { backoffDelayMs };

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
   * Holds `GET /api/devices/auth/wait` so an acceptance reaches this agent at once. True when
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
    const dialed = await dialTunnel(config.serverAddress, '/agent/connection', {
      // The token says which device; the proof says this agent holds its key (agent protocol 2).
      headers: {
        authorization: `Bearer ${auth.token}`,
        ...signedHeaders({ purpose: 'tunnel', uid: auth.uid }, this.signingKey!, this.clock),
        // The stream kinds it serves beyond ssh and tcp: the gateway picks the session protocol by this.
        ...(this.sessions ? { [STREAM_KINDS_HEADER]: SESSION_STREAM_KINDS.join(',') } : {}),
      },
      timeoutMs: Math.max(5000, this.config.keepaliveInterval * 1000),
      onStream: (header, stream) => this.serveStream(header, stream),
    });
    if (!dialed.ok) {
      if (dialed.status === 403) {
        const status = refusedStatus(dialed.body);
        if (status === 'pending') {
          log.info(`device ${auth.uid} is pending acceptance in namespace ${auth.namespace}`);
          return 'pending';
        }
        log.warn(
          `device ${auth.uid} was ${status} in namespace ${auth.namespace}; the server refuses its tunnel`,
        );
        return 'waiting-acceptance';
      }
      if (dialed.status !== undefined) {
        log.warn(`the server refused the tunnel (${dialed.status}): ${dialed.body?.slice(0, 200) ?? ''}`);
      } else {
        log.warn(`tunnel to ${config.serverAddress.origin} failed: ${describeError(dialed.error)}`);
      }
      return 'failed';
    }
    const { ws, tunnel } = dialed;
    this.socket = ws;
    return this.serveUntilClosed(ws, tunnel, auth);
  }

  private async serveStream(header: StreamHeader, stream: Duplex): Promise<void> {
    if (header.kind === 'ssh') {
      this.ssh!.handleStream(stream);
      return;
    }
    if (header.kind === 'tcp') return connectDeviceNetwork(header.host, header.port, stream);
    if (header.kind === 'engine') throw new Error('a device agent is not a connector');
    if (!this.sessions) throw new Error('this agent does not serve the session protocol');
    return this.sessions.serve(header, stream);
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
