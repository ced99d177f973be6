import Router from '@koa/router';
import type { TSchema } from '@sinclair/typebox';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { type AwilixContainer, asFunction, asValue } from 'awilix';
import type { Context } from 'koa';
import { type AuthKind, type Caller, callerTenant } from '../auth/caller';
import { roleAtLeast } from '../auth/roles';
import type { TokenClaims, TokenService } from '../auth/tokens';
import { Forbidden, Invalid, NotFound, Unauthorized } from '../errors';
import type { StoreHealth } from '../store/health';
import { storeDown } from '../store/health';
import { requireTenant, TenantStore } from '../store/tenant';
import { createAjv, unstorableFields } from '../validation';
import { answersSecret } from './no-store';
import type { Cradle, Page, RegisteredRoute, RouteRequest, RouteSchema } from './route';

/**
 * How credentials become a caller. Core verifies token signatures; plugins that own users, API keys and devices
 * turn verified claims or key strings into callers (reading roles fresh on every request).
 */
export interface CallerResolvers {
  user?: (claims: TokenClaims, ctx: Context) => Promise<Caller>;
  device?: (claims: TokenClaims, ctx: Context) => Promise<Caller>;
  apiKey?: (key: string, ctx: Context) => Promise<Caller>;
}

export function buildRouter(
  routes: RegisteredRoute[],
  container: AwilixContainer<Cradle>,
  deps: {
    tokens: () => TokenService;
    resolvers: CallerResolvers;
    /** True for requests that arrived on the internal listener (routes with auth `internal`). */
    isInternal?: (ctx: Context) => boolean;
    /** True for requests that arrived on the data directory's local socket (routes with auth `local`). */
    isLocal?: (ctx: Context) => boolean;
    /** While the store is known to be down, calls answer 503 at once instead of each waiting for a timeout. */
    health?: StoreHealth;
  },
): Router {
  const router = new Router();
  const ajvParams = createAjv({ coerceTypes: 'array' });
  const ajvBody = createAjv();

  for (const route of bySpecificity(routes)) {
    if (!route.auth?.length)
      throw new Error(`route ${route.method} ${route.path} declares no auth (deny by default)`);
    if (route.instanceAdmin && route.auth.some((k) => k !== 'user' && k !== 'local'))
      throw new Error(
        `route ${route.method} ${route.path}: instance administration takes users and the local socket only`,
      );
    if (route.paged) checkPaged(route);
    const check = {
      params: compile(ajvParams, route.schema.params),
      query: compile(ajvParams, route.schema.query),
      body: compile(ajvBody, route.schema.body),
    };
    const noStore = answersSecret(route);
    router.register(route.path, [route.method], async (ctx: Context) => {
      // Set first, so refusals (a 401 with an MFA token, a 429) carry it as well as the answer with the secret.
      if (noStore) ctx.set('Cache-Control', 'no-store');
      if (deps.health?.isDown) throw storeDown();
      const caller = await authenticate(ctx, route.auth, deps);
      authorize(caller, route);
      // All three parts are checked before any refusal, so one 400 names every offending field.
      const bad: string[] = [];
      const params = validate(check.params, { ...ctx.params }, 'params', bad);
      const query = validate(check.query, { ...ctx.query }, 'query', bad);
      const body = route.schema.body
        ? validate(check.body, (ctx.request as { body?: unknown }).body ?? {}, 'body', bad)
        : undefined;
      if (bad.length) throw new Invalid([...new Set(bad)]);
      const scope = container.createScope();
      const tenantId = callerTenant(caller);
      scope.register({
        caller: asValue(caller),
        tenantId: asValue(tenantId),
        // The caller's tenant, bound once: tenant services take it and cannot reach another tenant's rows. Made
        // when first asked for, so calls that need no namespace still work for a caller who has none (403 else).
        tenant: asFunction(({ db }: Cradle) => new TenantStore(db, requireTenant(tenantId))).scoped(),
      });
      ctx.state.caller = caller;
      const req: RouteRequest<RouteSchema> = {
        params,
        query,
        body,
        caller,
        scope,
        services: scope.cradle,
        ctx,
        tenantId: () => requireTenant(tenantId),
        stillAllowed: async () => {
          try {
            const now = await authenticate(ctx, route.auth, deps);
            authorize(now, route);
            return callerTenant(now) === tenantId;
          } catch {
            return false;
          }
        },
      } as RouteRequest<RouteSchema>;
      try {
        let result = await route.handler(req);
        if (route.paged) result = sendPage(ctx, result);
        if (route.status && ctx.status === 404) ctx.status = route.status;
        if (result !== undefined) {
          ctx.body = result;
          if (route.status && ctx.status === 200) ctx.status = route.status;
        } else if (ctx.body === undefined) {
          ctx.status = ctx.status === 404 ? (route.status ?? 200) : ctx.status;
          if (ctx.status === 200) ctx.body = {};
        }
      } finally {
        await scope.dispose();
      }
    });
  }
  return router;
}

/** A paged route takes the paging parameters `page` and `per_page`; a route that does not fails boot. */
function checkPaged(route: RegisteredRoute): void {
  const props = (route.schema.query as { properties?: Record<string, unknown> } | undefined)?.properties;
  if (!props?.page || !props.per_page)
    throw new Error(`route ${route.method} ${route.path} is paged but its query takes no page and per_page`);
}

/** Sends a page: the items as the body, the total in `X-Total-Count` (readable by other origins' pages too). */
function sendPage(ctx: Context, result: unknown): unknown[] {
  const page = result as Page<unknown> | undefined;
  if (!Array.isArray(page?.items) || typeof page.total !== 'number')
    throw new Error(`paged route ${ctx.method} ${ctx.path} answered something other than { items, total }`);
  ctx.set('X-Total-Count', String(page.total));
  ctx.set('Access-Control-Expose-Headers', 'X-Total-Count');
  return page.items;
}

/**
 * Routes with a fixed segment where another has a parameter come first, whatever order the plugins registered them
 * in: the router answers with the first match, and `PATCH .../members/accept-invite` (cloud) must not be taken for
 * `PATCH .../members/:uid` (community).
 */
function bySpecificity(routes: RegisteredRoute[]): RegisteredRoute[] {
  const kinds = (path: string) => path.split('/').map((s) => (s.startsWith(':') ? 1 : 0));
  return [...routes].sort((a, b) => {
    const ka = kinds(a.path);
    const kb = kinds(b.path);
    for (let i = 0; i < Math.min(ka.length, kb.length); i++) {
      if (ka[i] !== kb[i]) return (ka[i] ?? 0) - (kb[i] ?? 0);
    }
    return ka.length - kb.length;
  });
}

function compile(
  ajv: ReturnType<typeof createAjv>,
  schema: TSchema | undefined,
): ValidateFunction | undefined {
  return schema ? ajv.compile(schema) : undefined;
}

/**
 * Checks one part of a request against its schema. Strings no store can keep (a NUL, a lone surrogate) are refused
 * here for every field of every route, whatever its schema says, so they never reach a query. The
 * offending field names are added to `bad`; the caller answers the one 400 shape, the JSON array of them.
 */
function validate(fn: ValidateFunction | undefined, value: unknown, where: string, bad: string[]): unknown {
  bad.push(...unstorableFields(value, where));
  if (!fn) return where === 'body' ? undefined : {};
  if (!fn(value)) bad.push(...fieldsOf(fn.errors ?? [], where));
  return value;
}

/** Field names from ajv errors: the missing property, else the first segment of the path. */
export function fieldsOf(errors: ErrorObject[], where = 'body'): string[] {
  const names = new Set<string>();
  for (const e of closestBranches(errors)) {
    const params = e.params as { missingProperty?: string; additionalProperty?: string };
    const path = e.instancePath.split('/').filter(Boolean);
    const name = params.missingProperty
      ? [...path, params.missingProperty].join('.')
      : params.additionalProperty
        ? [...path, params.additionalProperty].join('.')
        : path.join('.');
    names.add(name || where);
  }
  return [...names];
}

/**
 * Of the errors ajv gives for a value no branch of an `anyOf` takes, only those of the branch it came closest to
 * (fewest errors): `{ "filter": { "hostname": ".*", "extra": 1 } }` is `filter.extra`, not also every field of
 * the tags branch it was never meant as.
 */
function closestBranches(errors: ErrorObject[]): ErrorObject[] {
  const dropped = new Set<ErrorObject>();
  for (const union of errors.filter((e) => e.keyword === 'anyOf')) {
    const prefix = `${union.schemaPath}/`;
    const branches = new Map<string, ErrorObject[]>();
    for (const e of errors) {
      if (!e.schemaPath.startsWith(prefix)) continue;
      const branch = e.schemaPath.slice(prefix.length).split('/')[0] as string;
      branches.set(branch, [...(branches.get(branch) ?? []), e]);
    }
    const ranked = [...branches.values()].sort((x, y) => x.length - y.length);
    const [closest, ...others] = ranked;
    for (const list of others) for (const e of list) dropped.add(e);
    if (closest?.length) dropped.add(union);
  }
  return errors.filter((e) => !dropped.has(e));
}

async function authenticate(
  ctx: Context,
  accepted: AuthKind[],
  deps: {
    tokens: () => TokenService;
    resolvers: CallerResolvers;
    isInternal?: (ctx: Context) => boolean;
    isLocal?: (ctx: Context) => boolean;
  },
): Promise<Caller> {
  // Internal calls are served on the internal listener only; the public one does not even admit they exist.
  if (accepted.includes('internal')) {
    if (deps.isInternal?.(ctx)) return { kind: 'internal' };
    if (accepted.length === 1) throw new NotFound('route');
  }
  const apiKey = ctx.get('x-api-key');
  const authz = ctx.get('authorization');
  // The local socket is owner-only in the data directory: reaching it is the operator's credential (the CLI).
  if (accepted.includes('local')) {
    if (deps.isLocal?.(ctx) && !apiKey && !authz) return { kind: 'local' };
    if (accepted.length === 1) throw new NotFound('route');
  }
  if (accepted.includes('none') && !apiKey && !authz) return { kind: 'anonymous' };
  if (accepted.includes('none') && accepted.length === 1) return { kind: 'anonymous' };

  // The API key takes precedence when both are sent.
  if (apiKey) {
    if (!accepted.includes('apiKey')) throw new Forbidden('this call cannot be made with an API key');
    if (!deps.resolvers.apiKey) throw new Unauthorized();
    return deps.resolvers.apiKey(apiKey, ctx);
  }
  const m = /^Bearer\s+(\S+)$/i.exec(authz);
  if (!m?.[1]) {
    if (accepted.includes('none')) return { kind: 'anonymous' };
    throw new Unauthorized();
  }
  const claims = await deps.tokens().verify(m[1]);
  if (claims.kind === 'user') {
    if (!accepted.includes('user')) throw new Forbidden('this call is not for user tokens');
    if (!deps.resolvers.user) throw new Unauthorized();
    return deps.resolvers.user(claims, ctx);
  }
  if (claims.kind === 'device') {
    if (!accepted.includes('device')) throw new Forbidden('this call is not for device tokens');
    if (deps.resolvers.device) return deps.resolvers.device(claims, ctx);
    if (!claims.tenant) throw new Unauthorized();
    return { kind: 'device', uid: claims.sub, tenantId: claims.tenant };
  }
  throw new Unauthorized();
}

function authorize(caller: Caller, route: RegisteredRoute): void {
  if (route.instanceAdmin && caller.kind === 'user' && !caller.admin)
    throw new Forbidden('this call is for instance administrators');
  if (!route.role) return;
  if (caller.kind !== 'user' && caller.kind !== 'apiKey') return;
  if (caller.kind === 'user' && !caller.tenantId)
    throw new Forbidden('this call needs a namespace; switch to one first');
  if (!roleAtLeast(caller.role, route.role))
    throw new Forbidden(`this call needs the ${route.role} role or higher`);
}
