import type { DeviceInfo } from './identity';

/** `GET /info` (SPEC.md section 3, Instance info). */
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

export async function fetchServerInfo(server: URL, agentVersion: string): Promise<ServerInfo> {
  const url = new URL('/info', server);
  url.searchParams.set('agent_version', agentVersion);
  const response = await fetch(url, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  if (!response.ok) throw await refusal(response);
  return (await response.json()) as ServerInfo;
}

export async function authenticateDevice(server: URL, request: DeviceAuthRequest): Promise<DeviceAuthResult> {
  const response = await fetch(new URL('/api/devices/auth', server), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(request),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
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
