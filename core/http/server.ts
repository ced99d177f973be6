import { createHash, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import type { IncomingMessage, Server } from 'node:http';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { bodyParser } from '@koa/bodyparser';
import type Router from '@koa/router';
import Koa, { type Context } from 'koa';
import compress from 'koa-compress';
import serveStatic from 'koa-static';
import type { Config } from '../config/schema';
import { HttpError, Invalid, NotFound, PayloadTooLarge } from '../errors';
import type { Logger } from '../log';
import type { Metrics } from '../metrics';
import { isStoreUnavailable, type StoreHealth, storeDown } from '../store/health';

/** Handles an HTTP upgrade (WebSocket) on a path; returns false to let the next handler try. */
export type UpgradeHandler = (
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
) => boolean | Promise<boolean>;

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** The Koa application: request ids, logs, metrics, one error body, body limits, routes, console assets. */
export function createHttpApp(deps: {
  config: Config;
  /** The console shell's built folder (the host's to say); the console is served from it when it exists. */
  consoleDir: string;
  log: Logger;
  metrics: Metrics;
  routers: Router[];
  extraRoutes?: Router[];
  /** Plugin middleware run before compression, body parsing and routing (RegisterContext.middleware). */
  early?: Koa.Middleware[];
  /** Told of store-away errors, so later calls answer 503 at once until the store is back. */
  health?: StoreHealth;
}): Koa {
  const { config, log, metrics } = deps;
  const app = new Koa({ proxy: config.http.trustProxy });
  app.silent = true;

  app.use(async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    const id = REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = id;
    ctx.set('X-Request-Id', id);
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = (ctx as Context & { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      metrics.httpRequests.inc({ method: ctx.method, route, status: String(ctx.status) });
      metrics.httpDuration.observe({ method: ctx.method, route }, seconds);
      const level = ctx.status >= 500 ? 'error' : 'info';
      log[level](
        {
          reqId: id,
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          ms: Math.round(seconds * 1e4) / 10,
        },
        'request',
      );
    }
  });

  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const away = !(err instanceof HttpError) && (await isStoreUnavailable(err, deps.health));
      if (away) log.warn({ reqId: ctx.state.requestId, err }, 'store unavailable');
      // The store (or the cache) is away: the caller did nothing wrong and may retry; never a 401 or a 500.
      writeError(ctx, away ? storeDown() : err, log);
    }
  });

  app.use(async (ctx, next) => {
    if (!oneHost(ctx.req)) throw new Invalid(['host'], 'a request names one Host');
    await next();
  });

  app.use(corsMiddleware(config.http.corsOrigins));

  for (const mw of deps.early ?? []) app.use(mw);

  // After the tunnel proxy: a site served through an HTTP tunnel keeps its own headers.
  app.use(securityHeaders(path.join(deps.consoleDir, 'index.html')));

  app.use(compress({ threshold: 1024 }));

  app.use(
    bodyParser({
      enableTypes: ['json'],
      // Some DELETE calls take a body (e.g. removing a firewall rule's tag).
      parsedMethods: ['POST', 'PUT', 'PATCH', 'DELETE'],
      jsonLimit: config.http.bodyLimit,
      encoding: 'utf-8',
      onError(err) {
        const e = err as { status?: number; type?: string };
        if (e.status === 413 || e.type === 'entity.too.large') throw new PayloadTooLarge();
        throw new Invalid(['body'], 'malformed JSON body');
      },
    }),
  );

  for (const router of deps.routers) {
    app.use(router.routes());
    app.use(router.allowedMethods({ throw: false }));
  }
  for (const router of deps.extraRoutes ?? []) app.use(router.routes());

  const consoleDir = deps.consoleDir;
  if (existsSync(consoleDir)) {
    app.use(serveStatic(consoleDir, { index: 'index.html', maxage: 0, gzip: true }));
  }
  app.use(async (ctx) => {
    if (ctx.status !== 404 || ctx.body !== undefined) return;
    const isApi = /^\/(api|internal|openapi|agent|ws|info|healthz|readyz|metrics)(\/|$)/.test(ctx.path);
    const indexHtml = path.join(consoleDir, 'index.html');
    if (!isApi && ctx.method === 'GET' && ctx.accepts('html') && existsSync(indexHtml)) {
      // Client-side routes of the console (e.g. /setup, /devices/...) all load the same shell.
      ctx.type = 'html';
      ctx.body = (await import('node:fs')).createReadStream(indexHtml);
      return;
    }
    throw new NotFound('route');
  });
  return app;
}

/**
 * The address a request came from, as Koa's `ctx.ip` gives it for the same request: with `http.trustProxy`, the
 * first address of X-Forwarded-For (what the reverse proxy saw), else the socket's peer. For upgrades, which Koa
 * never sees.
 */
export function clientAddress(req: IncomingMessage, trustProxy: boolean): string {
  const forwarded = trustProxy
    ? String(req.headers['x-forwarded-for'] ?? '')
        .split(',')[0]
        ?.trim()
    : '';
  return (forwarded || req.socket.remoteAddress || '').replace(/^::ffff:/, '').slice(0, 64);
}

/**
 * Whether a request names at most one Host. Node keeps the first of several Host headers and drops the rest, while a
 * proxy in front may go by another one; the parts that route by host (HTTP tunnels, the console's policy) would then
 * answer for a host the proxy did not mean. Such a request answers 400, upgrades too.
 */
export function oneHost(req: IncomingMessage): boolean {
  let hosts = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i]?.toLowerCase() === 'host' && ++hosts > 1) return false;
  }
  return true;
}

/**
 * Headers that keep the console from being framed (clickjacking), from leaking its URLs (the setup link carries a
 * signature) to other sites, and from running any script but its own: a Content-Security-Policy allowing scripts
 * from this origin and the one inline script of index.html (by its hash), styles from this origin (and inline style
 * attributes, which React and xterm.js set), WebSockets to this host, no plugins and no framing.
 */
function securityHeaders(indexHtml: string): Koa.Middleware {
  const inline = existsSync(indexHtml)
    ? [...readFileSync(indexHtml, 'utf8').matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)].map(
        (m) =>
          `'sha256-${createHash('sha256')
            .update(m[1] ?? '')
            .digest('base64')}'`,
      )
    : [];
  const policy = (host: string) =>
    [
      "default-src 'self'",
      `script-src 'self'${inline.map((h) => ` ${h}`).join('')}`,
      "style-src 'self' 'unsafe-inline'",
      "img-src 'self' data: blob:",
      "font-src 'self' data:",
      `connect-src 'self'${host ? ` ws://${host} wss://${host}` : ''}`,
      "object-src 'none'",
      "base-uri 'self'",
      "form-action 'self'",
      "frame-ancestors 'none'",
    ].join('; ');
  return async (ctx, next) => {
    // The Host header is the client's: only a plain host[:port] goes into the policy.
    const host = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/.test(ctx.host) ? ctx.host : '';
    ctx.set('Content-Security-Policy', policy(host));
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('X-Content-Type-Options', 'nosniff');
    await next();
  };
}

/** Calls that another origin's page may make when it is listed in `http.corsOrigins`. */
const CORS_PATHS = /^\/(api|info|openapi)(\/|$)/;

/**
 * Cross-origin calls from the listed origins only (the docs site's Try it): credentials travel in the
 * Authorization or X-API-Key header, never in cookies, so no credentialed CORS is needed or allowed.
 */
function corsMiddleware(list: string): Koa.Middleware {
  const origins = new Set(
    list
      .split(',')
      .map((o) => o.trim().replace(/\/$/, ''))
      .filter(Boolean),
  );
  return async (ctx, next) => {
    const origin = ctx.get('Origin');
    if (!origin || !origins.has(origin) || !CORS_PATHS.test(ctx.path)) return next();
    ctx.vary('Origin');
    ctx.set('Access-Control-Allow-Origin', origin);
    if (ctx.method === 'OPTIONS' && ctx.get('Access-Control-Request-Method')) {
      ctx.set('Access-Control-Allow-Methods', 'GET, POST, PUT, PATCH, DELETE');
      ctx.set('Access-Control-Allow-Headers', 'Authorization, X-API-Key, Content-Type');
      ctx.set('Access-Control-Max-Age', '600');
      ctx.status = 204;
      return;
    }
    await next();
    ctx.set('Access-Control-Expose-Headers', 'X-Total-Count, Retry-After, X-Request-Id');
  };
}

/** Writes the one error body (see docs/content/developers/architecture.md). Unknown errors are logged with the request id, never sent. */
export function writeError(ctx: Context, err: unknown, log: Logger): void {
  if (err instanceof HttpError) {
    ctx.status = err.status;
    for (const [k, v] of Object.entries(err.headers)) ctx.set(k, v);
    // Every 400 is the list of offending fields; one raised without names blames the body, except
    // a billing refusal, which answers a message and a code ("Billing errors return a message
    // and sometimes a code").
    const fields = err.fields ?? (err.status === 400 && err.code === undefined ? ['body'] : undefined);
    ctx.body = fields ? fields : { message: err.message, ...(err.code ? { code: err.code } : {}) };
    return;
  }
  const e = err as { status?: number; expose?: boolean; message?: string };
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500) {
    ctx.status = e.status;
    ctx.body =
      e.status === 400 ? ['body'] : { message: e.expose && e.message ? e.message : statusText(e.status) };
    return;
  }
  log.error({ reqId: ctx.state.requestId, err }, 'unhandled error');
  ctx.status = 500;
  ctx.body = { message: 'Internal Server Error' };
}

function statusText(status: number): string {
  return (
    { 400: 'bad request', 404: 'not found', 405: 'method not allowed', 413: 'request body too large' }[
      status
    ] ?? 'request refused'
  );
}

/** Dispatches HTTP upgrades to the first handler that takes them; the rest are refused with 404. */
export function attachUpgrades(
  server: Server,
  handlers: UpgradeHandler[],
  log: Logger,
  health?: StoreHealth,
): void {
  server.on('upgrade', async (req, socket, head) => {
    socket.on('error', () => socket.destroy());
    if (!oneHost(req)) {
      const body = JSON.stringify(['host']);
      socket.end(
        'HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nConnection: close\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      return;
    }
    try {
      for (const handler of handlers) {
        if (await handler(req, socket, head)) return;
      }
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    } catch (err) {
      if (await isStoreUnavailable(err, health)) {
        log.warn({ err, url: req.url }, 'upgrade refused: store unavailable');
        socket.end(
          'HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\nConnection: close\r\nContent-Length: 0\r\n\r\n',
        );
        return;
      }
      log.error({ err, url: req.url }, 'upgrade failed');
      socket.end('HTTP/1.1 500 Internal Server Error\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    }
  });
}
