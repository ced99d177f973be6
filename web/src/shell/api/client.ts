import type { Call } from './calls';
import { ApiError, NetworkError } from './errors';
import type { Page } from './types';

export interface RequestOptions {
  params?: Record<string, string | number>;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** Words naming what the person tried, used to start the error message ("Could not accept the device"). */
  context?: string;
  /** Let a 401 through to the caller instead of ending the session (the login call's MFA answer). */
  allowUnauthorized?: boolean;
}

export interface RawAnswer<T> {
  data: T;
  headers: Headers;
  status: number;
}

/**
 * The one HTTP client of the console. It adds the bearer token, builds paths from a call's template and turns
 * every unsuccessful answer into an ApiError whose message a person can read. Only a 401 ends the session; a 503
 * (the server cannot reach its database) is reported through `onServerAway` and keeps the person signed in.
 */
export class ApiClient {
  constructor(
    private readonly token: () => string | null,
    private readonly onSessionEnded: () => void,
    private readonly base = '',
    private readonly onServerAway: (away: boolean) => void = () => {},
  ) {}

  async raw<T>(call: Call, options: RequestOptions = {}): Promise<RawAnswer<T>> {
    const url = this.base + buildPath(call.path, options.params) + buildQuery(options.query);
    const headers: Record<string, string> = { Accept: 'application/json' };
    const token = this.token();
    if (token) headers.Authorization = `Bearer ${token}`;
    if (options.body !== undefined) headers['Content-Type'] = 'application/json';
    let response: Response;
    try {
      response = await fetch(url, {
        method: call.method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
      });
    } catch {
      throw new NetworkError();
    }
    const body = await readBody(response);
    if (response.status === 503) this.onServerAway(true);
    else if (response.ok) this.onServerAway(false);
    if (!response.ok) {
      if (response.status === 401 && !options.allowUnauthorized && token) this.onSessionEnded();
      throw new ApiError(response.status, response.headers, body, options.context ?? '');
    }
    return { data: body as T, headers: response.headers, status: response.status };
  }

  async call<T>(call: Call, options: RequestOptions = {}): Promise<T> {
    return (await this.raw<T>(call, options)).data;
  }

  /**
   * A long-lived answer read as it comes (the event stream, which EventSource could not send the token to):
   * resolves with the open response once its status is a success, and ends with `signal`.
   */
  async stream(
    call: Call,
    signal: AbortSignal,
    options: Pick<RequestOptions, 'params' | 'query' | 'context'> = {},
  ): Promise<Response> {
    const headers: Record<string, string> = { Accept: 'text/event-stream' };
    const token = this.token();
    if (token) headers.Authorization = `Bearer ${token}`;
    const url = this.base + buildPath(call.path, options.params) + buildQuery(options.query);
    let response: Response;
    try {
      response = await fetch(url, { method: call.method, headers, signal });
    } catch {
      throw new NetworkError();
    }
    if (!response.ok) {
      const body = await readBody(response);
      if (response.status === 401 && token) this.onSessionEnded();
      throw new ApiError(
        response.status,
        response.headers,
        body,
        options.context ?? 'Could not follow the live changes',
      );
    }
    return response;
  }

  /** A paged list: rows plus the total from X-Total-Count. */
  async page<T>(call: Call, options: RequestOptions = {}): Promise<Page<T>> {
    const answer = await this.raw<T[] | null>(call, options);
    const items = Array.isArray(answer.data) ? answer.data : [];
    const header = answer.headers.get('X-Total-Count');
    const total = header === null ? items.length : Number.parseInt(header, 10);
    return { items, total: Number.isFinite(total) ? total : items.length };
  }
}

export function buildPath(template: string, params: Record<string, string | number> = {}): string {
  return template.replace(/\{([^}]+)\}/g, (_, key: string) => {
    const value = params[key];
    if (value === undefined) throw new Error(`missing path parameter ${key} for ${template}`);
    return encodeURIComponent(String(value));
  });
}

function buildQuery(query: RequestOptions['query']): string {
  if (!query) return '';
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== '') search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

async function readBody(response: Response): Promise<unknown> {
  if (response.status === 204) return null;
  const text = await response.text();
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return { message: text };
  }
}

/** Filters are base64-encoded JSON lists of property and operator items. */
export type FilterItem =
  | {
      type: 'property';
      params: { name: string; operator: 'contains' | 'eq' | 'bool' | 'gt' | 'lt'; value: unknown };
    }
  | { type: 'operator'; params: { name: 'and' | 'or' } };

export function encodeFilter(items: FilterItem[]): string | undefined {
  if (items.length === 0) return undefined;
  const json = JSON.stringify(items);
  return btoa(String.fromCharCode(...new TextEncoder().encode(json)));
}
