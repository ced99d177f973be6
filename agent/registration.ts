import type { KeyObject } from 'node:crypto';
import { type ProofSubject, proofHeaders } from '@gatehouse/protocol/agent-proof';
import type { DeviceInfo } from './identity';

/**
 * The server's clock as this agent last saw it (the Date header of every answer). Proofs carry the server's time,
 * so a device whose own clock is wrong (no RTC, no NTP yet) still signs in.
 */
export class ServerClock {
  private offsetSeconds = 0;

  now(): number {
    return Math.floor(Date.now() / 1000) + this.offsetSeconds;
  }

  learn(date: string | null | undefined): void {
    const at = date ? Date.parse(date) : Number.NaN;
    if (Number.isNaN(at)) return;
    const offset = Math.round((at - Date.now()) / 1000);
    // The Date header has whole seconds: only a real difference moves the clock.
    this.offsetSeconds = Math.abs(offset) > 2 ? offset : 0;
  }

  get offset(): number {
    return this.offsetSeconds;
  }
}

/** The proof headers of agent protocol 2 for a request about `subject`, by the server's clock. */
export function signedHeaders(
  subject: ProofSubject,
  privateKey: string | KeyObject,
  clock: ServerClock,
): Record<string, string> {
  return proofHeaders(subject, privateKey, clock.now());
}

/** `GET /info`: what the server tells agents (see docs/content/developers/agent/protocol.md). */
export interface ServerInfo {
  version: string;
  endpoints: { ssh: string; api: string };
  setup?: boolean;
  authentication?: { local: boolean; saml: boolean };
}

/** Body of `POST /api/devices/auth`. */
export interface DeviceAuthRequest {
  info: DeviceInfo;
  sessions: string[];
  hostname: string;
  identity: { mac: string };
  public_key: string;
  tenant_id: string;
  /**
   * An install key of the namespace. Not part of the proof: the proof shows the agent holds its device key and
   * binds the fields that name the device; the key is a bearer secret that TLS protects like the body around it.
   */
  install_key?: string;
}

/** Answer of `POST /api/devices/auth`. */
export interface DeviceAuthResult {
  uid: string;
  token: string;
  name: string;
  namespace: string;
}

/** The server answered, but not with success; `status` tells why (404 unknown tenant, 400 malformed). */
export class ServerRefusal extends Error {
  override name = 'ServerRefusal';
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

const REQUEST_TIMEOUT_MS = 10_000;

async function refusal(response: Response): Promise<ServerRefusal> {
  let message = response.statusText;
  try {
    const body = (await response.json()) as { message?: unknown };
    if (typeof body.message === 'string') message = body.message;
  } catch {
    // A body that is not JSON keeps the status text.
  }
  return new ServerRefusal(response.status, message);
}

export async function fetchServerInfo(
  server: URL,
  agentVersion: string,
  clock?: ServerClock,
): Promise<ServerInfo> {
  const url = new URL('/info', server);
  url.searchParams.set('agent_version', agentVersion);
  const response = await fetch(url, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  clock?.learn(response.headers.get('date'));
  if (!response.ok) throw await refusal(response);
  return (await response.json()) as ServerInfo;
}

/**
 * `POST /api/devices/auth` with the proof that this agent holds the device key (agent protocol 2). A refusal for
 * the clock is retried once, by the server's clock as its answer gave it.
 */
export async function authenticateDevice(
  server: URL,
  request: DeviceAuthRequest,
  privateKey: string | KeyObject,
  clock: ServerClock = new ServerClock(),
): Promise<DeviceAuthResult> {
  const subject: ProofSubject = {
    purpose: 'register',
    tenantId: request.tenant_id,
    mac: request.identity.mac,
    publicKey: request.public_key,
    hostname: request.hostname,
  };
  const post = async () => {
    const response = await fetch(new URL('/api/devices/auth', server), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...signedHeaders(subject, privateKey, clock) },
      body: JSON.stringify(request),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const before = clock.offset;
    clock.learn(response.headers.get('date'));
    return { response, clockMoved: clock.offset !== before };
  };
  let { response, clockMoved } = await post();
  if (response.status === 401 && clockMoved) ({ response } = await post());
  if (!response.ok) throw await refusal(response);
  const result = (await response.json()) as Partial<DeviceAuthResult>;
  if (typeof result.uid !== 'string' || typeof result.token !== 'string') {
    throw new ServerRefusal(response.status, 'device auth answer lacks uid or token');
  }
  return { uid: result.uid, token: result.token, name: result.name ?? '', namespace: result.namespace ?? '' };
}

/**
 * `GET /api/devices/auth/wait` with the device token: held by the server while the device is pending, answered
 * with its status as soon as that changes (an acceptance) or after `timeoutSeconds`.
 */
export async function waitForAcceptance(
  server: URL,
  token: string,
  timeoutSeconds: number,
  signal: AbortSignal,
): Promise<string> {
  const url = new URL('/api/devices/auth/wait', server);
  url.searchParams.set('timeout', String(timeoutSeconds));
  const response = await fetch(url, {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutSeconds * 1000 + REQUEST_TIMEOUT_MS)]),
  });
  if (!response.ok) throw await refusal(response);
  const body = (await response.json()) as { status?: unknown };
  if (typeof body.status !== 'string') throw new ServerRefusal(response.status, 'wait answer lacks status');
  return body.status;
}

/** `POST /api/auth/ssh` with the device token: the server signs a gateway sign-in blob. */
export async function signGatewayBlob(
  server: URL,
  token: string,
  body: { fingerprint: string; data: string },
): Promise<{ signature: string }> {
  const response = await fetch(new URL('/api/auth/ssh', server), {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  if (!response.ok) throw await refusal(response);
  return (await response.json()) as { signature: string };
}
