import Docker from 'dockerode';

/** The TLS material of a connector, as it is kept sealed. */
export interface EngineTls {
  ca?: string;
  cert?: string;
  key?: string;
}

/** Where a connector's engine answers (the Docker Engine API, or podman's Docker-compatible one). */
export interface EngineEndpoint {
  address: string;
  port: number;
  secure: boolean;
  tls: EngineTls;
}

/** How long a connection may take to open, and a test call (version, info) to answer. */
export const ENGINE_TIMEOUT_MS = 5_000;

/**
 * A dockerode client for the endpoint. Only the connection phase is bounded here: the event stream and the
 * hijacked exec streams are long-lived, so a socket idle timeout would cut them.
 */
export function engineClient(endpoint: EngineEndpoint): Docker {
  // docker-modem takes connectionTimeout; @types/dockerode does not list it.
  const options: Docker.DockerOptions & { connectionTimeout: number } = {
    host: endpoint.address,
    port: endpoint.port,
    protocol: endpoint.secure ? 'https' : 'http',
    ...(endpoint.secure ? { ca: endpoint.tls.ca, cert: endpoint.tls.cert, key: endpoint.tls.key } : {}),
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

export async function engineVersion(docker: Docker): Promise<EngineVersion> {
  const version = await (docker.version.bind(docker) as Bounded<Docker.DockerVersion>)({
    abortSignal: AbortSignal.timeout(ENGINE_TIMEOUT_MS),
  });
  const components = (version as { Components?: { Name?: string }[] }).Components;
  return {
    name: components?.[0]?.Name ?? 'Docker Engine',
    version: version.Version ?? '',
    arch: version.Arch ?? '',
  };
}

export interface EngineStatus {
  State: 'connected' | 'disconnected';
  Message: string;
}

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

/** The engine's information object (`GET /info`), within the timeout. */
export function engineInfo(docker: Docker): Promise<Record<string, unknown>> {
  return (docker.info.bind(docker) as Bounded<Record<string, unknown>>)({
    abortSignal: AbortSignal.timeout(ENGINE_TIMEOUT_MS),
  });
}

/** A one-line reason for a failed engine call, without anything of the TLS material. */
export function engineError(err: unknown): string {
  const e = err as { name?: string; code?: string; message?: string; statusCode?: number };
  if (e?.name === 'AbortError' || e?.name === 'TimeoutError')
    return `the engine did not answer within ${ENGINE_TIMEOUT_MS / 1000} s`;
  const text = String(e?.message ?? err)
    .replace(/\s+/g, ' ')
    .trim();
  return (text || e?.code || 'the engine could not be reached').slice(0, 500);
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
