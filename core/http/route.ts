import type { Static, TSchema } from '@sinclair/typebox';
import type { AwilixContainer } from 'awilix';
import type { Context } from 'koa';
import type { AuthKind, Caller } from '../auth/caller';
import type { Role } from '../auth/roles';

import type { Cradle } from '../cradle';

export type { Cradle };

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RouteSchema {
  params?: TSchema;
  query?: TSchema;
  body?: TSchema;
  /** Answers by status; `null` for an answer without a body. */
  response?: Record<number, TSchema | null>;
  /** Response headers worth documenting, by name. */
  headers?: Record<string, string>;
  /** Request headers the call reads (documented as header parameters; the handler checks them). */
  requestHeaders?: Record<string, { description: string; required?: boolean }>;
}

type Infer<S, K extends keyof RouteSchema> = S extends { [P in K]: infer X extends TSchema }
  ? Static<X>
  : undefined;

export interface RouteRequest<S extends RouteSchema> {
  params: Infer<S, 'params'>;
  query: Infer<S, 'query'>;
  body: Infer<S, 'body'>;
  caller: Caller;
  /** The request scope; `services` is its typed cradle. */
  scope: AwilixContainer<Cradle>;
  services: Cradle;
  ctx: Context;
  /** The caller's namespace; 403 when the caller has none. */
  tenantId(): string;
  /**
   * Whether this request's credentials would still be let through now, for the same namespace: a long-lived
   * answer (an event stream) asks again from time to time, so that a member removed, a key revoked or a session
   * signed out stops receiving it.
   */
  stillAllowed(): Promise<boolean>;
}

/** One page of a list and the number of items in all pages (the router sends the total as `X-Total-Count`). */
export interface Page<T> {
  items: T[];
  total: number;
}

/** A route as data: validation, permission checks and the OpenAPI documents all come from this. */
export interface RouteDef<S extends RouteSchema = RouteSchema> {
  method: Method;
  /** Koa-style path, e.g. `/api/devices/:uid`. */
  path: string;
  /** Caller kinds accepted. `['none']` must be written out for public calls. */
  auth: AuthKind[];
  /** Least member role for user and API-key callers. */
  role?: Role;
  /** Instance administration: user callers must be instance administrators (403 otherwise). */
  instanceAdmin?: boolean;
  /**
   * The answer carries a credential under a name the router does not know for one (a new API key's `id`): its
   * answers get `Cache-Control: no-store`, as those of routes answering a `token`, `secret`, `recovery_codes`,
   * `ticket` or `signature` do without saying so (http/no-store.ts).
   */
  secret?: boolean;
  summary: string;
  description?: string;
  tags: string[];
  deprecated?: boolean;
  /**
   * A stand-in, answered only until a later plugin registers the same method and path and so replaces it: the calls
   * that answer 501 outside an edition (SAML outside enterprise) say so where that edition's plugin is not loaded.
   */
  standIn?: boolean;
  /** Documented with status 200 unless set; the handler may still set ctx.status. */
  status?: number;
  schema: S;
  /**
   * A paged list: the query schema takes `page` and `per_page` (`pageQuery`, `listQuery`), the
   * handler returns a `Page`, and the router answers with its items and sets `X-Total-Count` (documented in the
   * OpenAPI document without the route saying so).
   */
  paged?: boolean;
  handler: (req: RouteRequest<S>) => unknown;
}

/** A paged list route: its handler returns one page and the total. */
export interface PagedRouteDef<S extends RouteSchema = RouteSchema> extends RouteDef<S> {
  paged: true;
  handler: (req: RouteRequest<S>) => Page<unknown> | Promise<Page<unknown>>;
}

/** Identity function that gives a route definition its types (a paged one's handler must return a `Page`). */
export function defineRoute<S extends RouteSchema>(def: PagedRouteDef<S>): RouteDef<S>;
export function defineRoute<S extends RouteSchema>(def: RouteDef<S> & { paged?: false }): RouteDef<S>;
export function defineRoute<S extends RouteSchema>(def: RouteDef<S>): RouteDef<S> {
  return def;
}

/** A route as the registry keeps it, with the plugin that owns it. */
export interface RegisteredRoute extends RouteDef<RouteSchema> {
  plugin: string;
}
