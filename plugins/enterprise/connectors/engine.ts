import { Agent, type ClientRequestArgs } from 'node:http';
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect } from 'node:tls';
import Docker from 'dockerode';
import type { EngineStatus } from './schemas';

/** The TLS material of a connector, as it is kept sealed. */
export interface EngineTls {
  ca?: string;
  cert?: string;
  key?: string;
}

/** Opens one connection to a connector's engine, through the connector's tunnel (on whichever instance holds it). */
export type EngineLine = () => Promise<Duplex>;

/** How the server speaks to the engine at the other end of a connector: plain HTTP, or TLS end to end. */
export interface EngineLink {
  line: EngineLine;
  secure: boolean;
  tls: EngineTls;
  /** The engine's host as the connector reports it: the name its TLS certificate must carry. */
  host: string;
}

/** How long a connection may take to open, and a test call (version, info) to answer. */
export const ENGINE_TIMEOUT_MS = 5_000;
/**
 * Most bytes an engine's answer may have when it is read whole (a list, an inspect, the information object). The
 * connector, and so the engine, is its namespace's: an answer past this is not an engine's, and is not kept.
 */
export const ENGINE_ANSWER_LIMIT = 16 * 1024 * 1024;

/** What went wrong between the server and the engine, as the namespace is told it. */
export class EngineUnreachable extends Error {
  override name = 'EngineUnreachable';
}

/**
 * The connections of one dockerode client: each request is a stream through the connector's tunnel, wrapped in TLS
 * when the connector is `secure`. With `bounded`, a connection that carries more than ENGINE_ANSWER_LIMIT before it
 * becomes a raw stream (an exec's `101 Switching Protocols`) is cut: dockerode reads those answers whole.
 */
class EngineAgent extends Agent {
  constructor(
    private readonly link: EngineLink,
    private readonly bounded: boolean,
  ) {
    super({ keepAlive: false });
  }

  override createConnection(
    _options: ClientRequestArgs,
    callback?: (err: Error | null, stream: Duplex) => void,
  ): Duplex | null | undefined {
    this.link.line().then(
      (stream) => {
        const socket = this.link.secure ? this.secure(stream) : stream;
        if (this.bounded) limitAnswer(socket);
        callback?.(null, socket);
      },
      (err: unknown) => callback?.(err as Error, undefined as unknown as Duplex),
    );
    return undefined;
  }

  private secure(stream: Duplex): Duplex {
    const { tls, host } = this.link;
    const secured = tlsConnect({
      socket: stream,
      ca: tls.ca,
      cert: tls.cert,
      key: tls.key,
      host,
      ...(isIP(host) ? {} : { servername: host }),
    });
    // TLS over a stream does not end that stream with it: the tunnel's stream goes when the TLS socket does.
    secured.once('close', () => stream.destroy());
    return secured;
  }
}

function limitAnswer(socket: Duplex): void {
  let seen = 0;
  let raw = false;
  const watch = (chunk: Buffer) => {
    if (seen === 0 && chunk.subarray(0, 12).toString('latin1').startsWith('HTTP/1.1 101')) raw = true;
    seen += chunk.length;
    if (raw) socket.off('data', watch);
    else if (seen > ENGINE_ANSWER_LIMIT) socket.destroy(new EngineUnreachable('answer too large'));
  };
  socket.on('data', watch);
}

/**
 * A dockerode client whose every connection goes through the connector's tunnel to the engine the connector
 * serves. `bounded` (the default) is for calls answered whole; the event stream, which never ends, takes an
 * unbounded client (its lines are bounded where they are read).
 */
export function engineClient(link: EngineLink, opts: { bounded?: boolean } = {}): Docker {
  // docker-modem takes connectionTimeout and agent; @types/dockerode lists neither.
  const options: Docker.DockerOptions & { connectionTimeout: number; agent: Agent } = {
    // The request's host: the connector, not the server, decides where the connection goes.
    host: 'engine',
    port: 80,
    protocol: 'http',
    agent: new EngineAgent(link, opts.bounded ?? true),
    connectionTimeout: ENGINE_TIMEOUT_MS,
  };
  return new Docker(options);
}

/** The engine's name, version and architecture (`GET /version`). */
export interface EngineVersion {
  name: string;
  version: string;
  arch: string;
}

/** dockerode takes an abort signal on every call; @types/dockerode lists it on few. */
type Bounded<T> = (opts: { abortSignal: AbortSignal }) => Promise<T>;

/** A short printable text of the engine's own answer, or '' (the answer may be anything the connector sends). */
function word(value: unknown, max: number): string {
  return typeof value === 'string' ? value.replace(/[^\x20-\x7e]/g, '').slice(0, max) : '';
}

export async function engineVersion(docker: Docker): Promise<EngineVersion> {
  const version = await (docker.version.bind(docker) as Bounded<Docker.DockerVersion>)({
    abortSignal: AbortSignal.timeout(ENGINE_TIMEOUT_MS),
  });
  if (typeof version !== 'object' || version === null || typeof version.Version !== 'string') {
    throw new EngineUnreachable('not an engine');
  }
  const components = (version as { Components?: { Name?: string }[] }).Components;
  return {
    name: word(Array.isArray(components) ? components[0]?.Name : undefined, 64) || 'Docker Engine',
    version: word(version.Version, 64),
    arch: word(version.Arch, 32),
  };
}

/**
 * What the namespace is told about its connector: a short, fixed set of reasons. None of them carries a network
 * error's text, an address or a port: they say which part of the path failed, not what lies beyond it.
 */
export const STATUS = {
  waiting:
    'waiting for its connector: run gatehouse-agent connector beside the engine with this connector’s token',
  offline: 'the connector is not connected',
  unreachable: 'the connector could not reach its engine',
  timeout: `the engine did not answer within ${ENGINE_TIMEOUT_MS / 1000} s`,
  tls: 'the TLS handshake with the engine failed (check the CA, the client certificate and the engine’s name)',
  notEngine: 'the engine’s answer is not a container engine’s',
  refused: 'the engine refused the call',
  taken: 'this engine is already served by an older connector; its containers stay with that one',
} as const;

/** Asks the engine who it is: `connected` with its name and version, or `disconnected` with the reason. */
export async function probeEngine(docker: Docker): Promise<EngineStatus> {
  try {
    return connectedTo(await engineVersion(docker));
  } catch (err) {
    return { State: 'disconnected', Message: engineError(err) };
  }
}

/** The status of a connector whose engine answered. */
export function connectedTo(engine: EngineVersion): EngineStatus {
  return { State: 'connected', Message: `${engine.name} ${engine.version}`.trim() };
}

/**
 * The engine's information object (`GET /info`), within the timeout. Only an answer shaped as an engine's is
 * passed on (an object naming its server version, with counts of containers and images); anything else is refused.
 */
export async function engineInfo(docker: Docker): Promise<Record<string, unknown>> {
  const info = await (docker.info.bind(docker) as Bounded<unknown>)({
    abortSignal: AbortSignal.timeout(ENGINE_TIMEOUT_MS),
  });
  const o = info as Record<string, unknown>;
  if (
    typeof info !== 'object' ||
    info === null ||
    Array.isArray(info) ||
    typeof o.ServerVersion !== 'string' ||
    typeof o.ID !== 'string' ||
    typeof o.Containers !== 'number' ||
    typeof o.Images !== 'number'
  ) {
    throw new EngineUnreachable('not an engine');
  }
  return o;
}

/** The reason for a failed engine call, from the fixed set of STATUS. */
export function engineError(err: unknown): string {
  const e = err as { name?: string; code?: string; message?: string; statusCode?: number };
  if (e?.name === 'DeviceOffline' || e?.name === 'ConnectorOffline') return STATUS.offline;
  if (e?.name === 'AbortError' || e?.name === 'TimeoutError') return STATUS.timeout;
  if (e?.name === 'EngineUnreachable')
    return e.message === 'not an engine' ? STATUS.notEngine : STATUS.unreachable;
  if (typeof e?.code === 'string' && /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED)/.test(e.code))
    return STATUS.tls;
  if (/certificate|handshake|ssl|tls/i.test(String(e?.message ?? ''))) return STATUS.tls;
  if (typeof e?.statusCode === 'number') return STATUS.refused;
  // The connector refused the stream: it could not open its engine.
  if (/could not reach its engine|refused|reset|closed|ended|socket hang up/i.test(String(e?.message ?? '')))
    return STATUS.unreachable;
  return STATUS.notEngine;
}

/**
 * Sets an exec's terminal size. podman answers `POST /exec/{id}/resize` with 201 Created where Docker answers
 * 200, and dockerode takes any status it does not list as an error; the resize was done all the same.
 */
export async function resizeExec(exec: Docker.Exec, rows: number, cols: number): Promise<void> {
  try {
    // Bounded: input to the exec waits for its resize (exec.ts), so an engine that never answers must not stall it.
    await exec.resize({ h: rows, w: cols, abortSignal: AbortSignal.timeout(ENGINE_TIMEOUT_MS) });
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 201) return;
    throw err;
  }
}
