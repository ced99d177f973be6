import type { RegisteredRoute } from '@gatehouse/core/http/route';
import type { ApiAnswer, ApiOptions, TestServer } from '../support/server';

/** `METHOD /path` of a route, for failure lists. */
export const label = (r: { method: string; path: string }) => `${r.method} ${r.path}`;

/** Internal calls (server to server) are hidden from the public listener behind a 404. */
export const internalOnly = (r: RegisteredRoute) => r.auth.every((k) => k === 'internal');

/** Public calls that take no credentials at all (a token sent to them is ignored). */
export const publicOnly = (r: RegisteredRoute) => r.auth.every((k) => k === 'none');

/**
 * The call that ends the caller's own sign-in (sign-out): every later call with that token is refused, so a suite
 * that sends every route with shared tokens sends this one with a sign-in of its own (see secondSignIn), or last.
 */
export const endsSignIn = (r: { method: string; path: string }) =>
  r.method === 'DELETE' && r.path === '/api/auth/user';

/** A token of another sign-in of the same user, in the same namespace: ending it leaves the first one live. */
export async function secondSignIn(server: TestServer, userId: string, tenant: string): Promise<string> {
  const users = server.kernel.container.cradle.users;
  return (await users.authResult(await users.get(userId), tenant)).token;
}

export interface Request {
  method: string;
  path: string;
  opts?: ApiOptions;
  /** Another listener to send it to (see apiAt); the public one by default. */
  via?: TestServer['api'];
}

/**
 * Sends requests `width` at a time (the machine has two cores; a few requests in flight keep the server busy
 * without starving it) and returns the answers in order.
 */
export async function sendAll(server: TestServer, requests: Request[], width = 8): Promise<ApiAnswer[]> {
  const answers: ApiAnswer[] = new Array(requests.length);
  let next = 0;
  const worker = async () => {
    while (next < requests.length) {
      const i = next++;
      const q = requests[i] as Request;
      answers[i] = await (q.via ?? server.api)(q.method, q.path, q.opts);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, requests.length) }, worker));
  return answers;
}

/** A histogram of statuses, for the counts the suite prints. */
export function histogram(answers: { status: number }[]): Record<string, number> {
  const h: Record<string, number> = {};
  for (const a of answers) h[a.status] = (h[a.status] ?? 0) + 1;
  return h;
}

/**
 * `server.api`, aimed at another listener of the same server: the internal one (`kernel.internalUrl`), where the
 * calls other instances make are served.
 */
export function apiAt(base: string): TestServer['api'] {
  return async (method, p, o = {}) => {
    const headers: Record<string, string> = { ...o.headers };
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    if (o.apiKey) headers['x-api-key'] = o.apiKey;
    const body = o.raw !== undefined ? o.raw : o.body !== undefined ? JSON.stringify(o.body) : undefined;
    if (body !== undefined) headers['content-type'] ??= 'application/json';
    const res = await fetch(base + p, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, body: parsed, headers: res.headers };
  };
}
