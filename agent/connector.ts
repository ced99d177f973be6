import { request } from 'node:http';
import type { NetConnectOpts } from 'node:net';
import type { Duplex } from 'node:stream';
import type { MuxSession, StreamHeader } from '@gatehouse/protocol/mux';
import { type ConnectorConfig, describeEngine, type EngineTarget } from './connector-config';
import { connectAndPipe } from './device-network';
import type { AgentLog } from './log';
import { backoffDelayMs, describeError, dialTunnel } from './tunnel-socket';
import { AGENT_VERSION } from './version';

export const CONNECTOR_CONNECTION_PATH = '/connector/connection';
/** On the tunnel upgrade: the engine the connector serves, as `describeEngine` writes it (shown to the namespace). */
export const CONNECTOR_ENGINE_HEADER = 'x-gatehouse-connector-engine';
/** On the tunnel upgrade: the connector's version. */
export const CONNECTOR_VERSION_HEADER = 'x-gatehouse-connector-version';

function connectOptions(engine: EngineTarget): NetConnectOpts {
  return engine.kind === 'unix' ? { path: engine.path } : { host: engine.host, port: engine.port };
}

/** Whether the engine answers `GET /_ping` within 5 s; the reason when it does not. */
export function pingEngine(engine: EngineTarget): Promise<string | undefined> {
  return new Promise((resolve) => {
    const req = request(
      {
        ...connectOptions(engine),
        method: 'GET',
        path: '/_ping',
        timeout: 5000,
        headers: { host: 'engine' },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode === 200 ? undefined : `it answered ${res.statusCode} to GET /_ping`);
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer within 5 s')));
    req.on('error', (error) => resolve(describeError(error)));
    req.end();
  });
}

/**
 * The connector: a process beside a container engine that dials out to the Gatehouse server with its token and
 * keeps one tunnel up, over which the server opens `engine` streams, each piped to the engine this process was
 * configured with. The server never chooses where a stream goes: its namespace reaches exactly the engine that
 * the person who started this process could reach, which is how Gatehouse knows the engine is theirs.
 */
export class ConnectorAgent {
  private tunnel: MuxSession | undefined;
  private stopping = false;
  private wake: (() => void) | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly config: ConnectorConfig,
    private readonly log: AgentLog,
  ) {}

  async start(): Promise<void> {
    const { config, log } = this;
    const engine = describeEngine(config.engine);
    log.info(
      `gatehouse-agent ${AGENT_VERSION} connector starting: server ${config.serverAddress.origin}, engine ${engine}`,
    );
    const problem = await pingEngine(config.engine);
    if (problem) log.warn(`the engine at ${engine} does not answer yet: ${problem}`);
    this.running = this.run();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    this.tunnel?.close();
    await Promise.race([this.running, new Promise((resolve) => setTimeout(resolve, 3000).unref())]);
  }

  private async run(): Promise<void> {
    let attempt = 0;
    while (!this.stopping) {
      const outcome = await this.connectOnce();
      if (this.stopping) break;
      if (outcome === 'was-online') attempt = 0;
      // A refused token stays refused until someone changes it: no point in asking often.
      const delay = outcome === 'refused' ? 60_000 : backoffDelayMs(attempt++);
      this.log.info(`next attempt in ${(delay / 1000).toFixed(1)} s`);
      await this.sleep(delay);
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

  private serveStream = async (header: StreamHeader, stream: Duplex): Promise<void> => {
    if (header.kind !== 'engine') throw new Error('a connector serves engine streams only');
    // The server learns that the engine is out of reach, not where or why on this host.
    await connectAndPipe(connectOptions(this.config.engine), 'the engine', stream).catch(() => {
      throw new Error('the connector could not reach its engine');
    });
  };

  private async connectOnce(): Promise<'was-online' | 'refused' | 'failed'> {
    const { config, log } = this;
    const dialed = await dialTunnel(config.serverAddress, CONNECTOR_CONNECTION_PATH, {
      headers: {
        authorization: `Bearer ${config.token}`,
        [CONNECTOR_ENGINE_HEADER]: describeEngine(config.engine),
        [CONNECTOR_VERSION_HEADER]: AGENT_VERSION,
      },
      timeoutMs: Math.max(5000, config.keepaliveInterval * 1000),
      onStream: this.serveStream,
    });
    if (!dialed.ok) {
      if (dialed.status === 401 || dialed.status === 403 || dialed.status === 404) {
        log.error(
          `the server refused this connector (${dialed.status}): ${dialed.body?.slice(0, 200) ?? ''}; ` +
            'check GATEHOUSE_CONNECTOR_TOKEN (a new token replaces the old one)',
        );
        return 'refused';
      }
      if (dialed.status !== undefined) {
        log.warn(`the server refused the tunnel (${dialed.status}): ${dialed.body?.slice(0, 200) ?? ''}`);
      } else {
        log.warn(`tunnel to ${config.serverAddress.origin} failed: ${describeError(dialed.error)}`);
      }
      return 'failed';
    }
    const { ws, tunnel } = dialed;
    this.tunnel = tunnel;
    log.info(`online: serving ${describeEngine(config.engine)} to ${config.serverAddress.origin}`);
    const keepalive = setInterval(() => {
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
