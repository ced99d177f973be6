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
}

/** A route as data: validation, permission checks and the OpenAPI documents all come from this (STYLE.md 4). */
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
  summary: string;
  description?: string;
  tags: string[];
  deprecated?: boolean;
  /** Documented with status 200 unless set; the handler may still set ctx.status. */
  status?: number;
  schema: S;
  handler: (req: RouteRequest<S>) => unknown;
}

/** Identity function that gives a route definition its types. */
export function defineRoute<S extends RouteSchema>(def: RouteDef<S>): RouteDef<S> {
  return def;
}

/** A route as the registry keeps it, with the plugin that owns it. */
export interface RegisteredRoute extends RouteDef<RouteSchema> {
  plugin: string;
}
