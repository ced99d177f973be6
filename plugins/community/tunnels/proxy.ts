import {
  request as httpRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  STATUS_CODES,
} from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import {
  type Config,
  type Hooks,
  HttpError,
  htmlText,
  type Logger,
  type UpgradeHandler,
} from '@gatehouse/core';
import type { Knex } from 'knex';
import type { Middleware } from 'koa';
import { raw } from 'objection';
import type { TunnelHub } from '../agent-tunnels/hub';
import { Tunnel } from './model';

/** Headers that describe one hop and must not be forwarded (RFC 9110 section 7.6.1). */
const hopByHop = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** Longest delay setTimeout accepts; tunnels living longer are checked on each new request instead. */
const MAX_TIMER_MS = 2 ** 31 - 1;

type Refusal = { status: number; title: string; detail: string };

/**
 * The HTTP tunnel proxy: a request for `<address>.<tunnels domain>` travels over the device's agent tunnel to the
 * tunnel's host:port, both directions streamed, WebSocket upgrades included. Each request checks the tunnel in
 * the store, so a deleted or expired tunnel stops answering at once; connections already open through it are
 * closed on deletion and at expiry.
 */
export class TunnelProxy {
  private readonly db: Knex;
  private readonly hub: TunnelHub;
  private readonly hooks: Hooks;
  private readonly log: Logger;
  private readonly hostPattern: RegExp | undefined;
  private readonly open = new Map<string, Set<Duplex>>();

  constructor(deps: { db: Knex; tunnelHub: TunnelHub; hooks: Hooks; config: Config; log: Logger }) {
    this.db = deps.db;
    this.hub = deps.tunnelHub;
    this.hooks = deps.hooks;
    this.log = deps.log.child({ part: 'tunnel-proxy' });
    const domain = deps.config.tunnels.domain?.toLowerCase().replace(/^\.+|\.+$/g, '');
    this.hostPattern = domain
      ? new RegExp(`^([0-9a-f]{32})\\.${domain.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(:\\d+)?$`)
      : undefined;
  }

  /** The tunnel address a Host header names, if it is one of ours. */
  addressOf(host: string | undefined): string | undefined {
    if (!this.hostPattern || !host) return undefined;
    return this.hostPattern.exec(host.toLowerCase())?.[1];
  }

  /** Closes every connection open through a tunnel (it was deleted). */
  closeAddress(address: string): void {
    for (const stream of this.open.get(address) ?? []) stream.destroy();
    this.open.delete(address);
  }

  stop(): void {
    for (const address of [...this.open.keys()]) this.closeAddress(address);
  }

  /** Koa middleware (RegisterContext.middleware): takes tunnel hosts, passes everything else on. */
  readonly middleware: Middleware = async (ctx, next) => {
    const address = this.addressOf(ctx.get('host'));
    if (!address) return next();
    ctx.respond = false;
    const res = ctx.res;
    const target = await this.reach(address);
    if ('status' in target) {
      ctx.status = target.status;
      res.writeHead(target.status, {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
      });
      res.end(page(target));
      return;
    }
    const { stream, host, port } = target;
    await new Promise<void>((resolve) => {
      const upstream = httpRequest({
        method: ctx.req.method,
        path: ctx.req.url,
        headers: forwardHeaders(ctx.req, `${host}:${port}`, false),
        createConnection: () => stream as Socket,
      });
      upstream.on('response', (answer) => {
        ctx.status = answer.statusCode ?? 502;
        const headers: OutgoingHttpHeaders = {};
        for (const [k, v] of Object.entries(answer.headers)) {
          if (!hopByHop.has(k) && v !== undefined) headers[k] = v;
        }
        if (answer.headers['set-cookie']) headers['set-cookie'] = hostOnly(answer.headers['set-cookie']);
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, headers);
        answer.pipe(res);
        answer.on('error', () => res.destroy());
      });
      upstream.on('error', (err) => {
        this.log.debug({ address, err: err.message }, 'tunnel request failed');
        if (!res.headersSent) {
          ctx.status = 502;
          res.writeHead(502, { 'content-type': 'text/html; charset=utf-8' });
          res.end(
            page({
              status: 502,
              title: 'The device did not answer',
              detail: `The connection to ${host}:${port} through the device closed before an answer.`,
            }),
          );
        } else res.destroy();
      });
      ctx.req.pipe(upstream);
      ctx.req.on('aborted', () => upstream.destroy());
      res.on('close', () => {
        stream.destroy();
        resolve();
      });
    });
  };

  /** Upgrade handler (RegisterContext.upgrade): WebSockets and other upgrades through a tunnel, as raw bytes. */
  readonly upgrade: UpgradeHandler = async (req, socket, head) => {
    const address = this.addressOf(req.headers.host);
    if (!address) return false;
    const target = await this.reach(address);
    if ('status' in target) {
      const body = page(target);
      socket.end(
        `HTTP/1.1 ${target.status} ${STATUS_CODES[target.status] ?? 'Refused'}\r\n` +
          `Content-Type: text/html; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `Connection: close\r\n\r\n${body}`,
      );
      return true;
    }
    const { stream, host, port } = target;
    const headers = forwardHeaders(req, `${host}:${port}`, true);
    let text = `${req.method ?? 'GET'} ${req.url ?? '/'} HTTP/1.1\r\n`;
    for (const [k, v] of Object.entries(headers)) {
      for (const value of Array.isArray(v) ? v : [v]) text += `${k}: ${value}\r\n`;
    }
    stream.write(`${text}\r\n`);
    if (head.length > 0) stream.write(head);
    stream.pipe(socket);
    socket.pipe(stream);
    socket.on('error', () => stream.destroy());
    stream.on('error', () => socket.destroy());
    socket.on('close', () => stream.destroy());
    stream.on('close', () => socket.destroy());
    return true;
  };

  /**
   * The live tunnel at an address: unexpired, with its device's status. Across namespaces: the address is unique
   * in the installation and is all a request to a tunnel host carries.
   */
  private async live(
    address: string,
  ): Promise<(Tunnel & { device_status: string; expires_in_ms: number | null }) | undefined> {
    return (await Tunnel.acrossTenants(this.db)
      .findById(address)
      .joinRelated('device')
      .where((b) => b.whereNull('tunnels.expires_at').orWhere('tunnels.expires_at', '>', raw('now()')))
      .select(
        'tunnels.*',
        'device.status as device_status',
        // Measured by the database clock, the same one that decides expiry in the query.
        raw('(extract(epoch from tunnels.expires_at - now()) * 1000)::float8 as expires_in_ms'),
      )) as (Tunnel & { device_status: string; expires_in_ms: number | null }) | undefined;
  }

  /** Finds the tunnel and opens a stream to its host:port, or says why not. */
  private async reach(address: string): Promise<Refusal | { stream: Duplex; host: string; port: number }> {
    const tunnel = await this.live(address);
    if (!tunnel) {
      return { status: 404, title: 'No such tunnel', detail: 'This tunnel does not exist or has expired.' };
    }
    if (tunnel.device_status === 'accepted') {
      // The rules a plugin sets on reaching a device (cloud billing: after a subscription lapsed, only the chosen
      // devices), as for SSH sessions and the web terminal.
      try {
        await this.hooks.run('device.beforeConnect', { tenantId: tunnel.tenant_id, uid: tunnel.device_uid });
      } catch (err) {
        if (!(err instanceof HttpError) || err.status >= 500) throw err;
        return { status: err.status, title: 'This device is not reachable', detail: err.message };
      }
    }
    if (tunnel.device_status !== 'accepted' || !(await this.hub.reachable(tunnel.device_uid))) {
      return {
        status: 502,
        title: 'The device is offline',
        detail:
          'The device behind this tunnel is not connected to Gatehouse right now. Try again once its agent is ' +
          'back online.',
      };
    }
    let stream: Duplex;
    try {
      stream = await this.hub.open(tunnel.device_uid, { kind: 'tcp', host: tunnel.host, port: tunnel.port });
    } catch (err) {
      this.log.debug({ address, err: (err as Error).message }, 'tunnel stream refused');
      return {
        status: 502,
        title: 'The device could not reach the service',
        detail: `The device could not connect to ${tunnel.host}:${tunnel.port} on its network.`,
      };
    }
    this.track(address, stream, tunnel.expires_in_ms);
    return { stream, host: tunnel.host, port: tunnel.port };
  }

  private track(address: string, stream: Duplex, expiresInMs: number | null): void {
    const set = this.open.get(address) ?? new Set<Duplex>();
    set.add(stream);
    this.open.set(address, set);
    const timer =
      expiresInMs !== null && expiresInMs < MAX_TIMER_MS
        ? setTimeout(() => stream.destroy(), Math.max(0, expiresInMs)).unref()
        : undefined;
    stream.once('close', () => {
      if (timer) clearTimeout(timer);
      set.delete(stream);
      if (set.size === 0 && this.open.get(address) === set) this.open.delete(address);
    });
  }
}

/**
 * Cookies a tunnelled site sets, without their Domain attribute: every tunnel is a host under the tunnels domain,
 * so `Domain=<tunnels domain>` would hand the cookie to every tenant's tunnels. Without it a cookie stays with the
 * one host that set it (RFC 6265 section 5.3). Everything else of the cookie is passed on as set.
 */
function hostOnly(cookies: string[]): string[] {
  return cookies.map((cookie) =>
    cookie
      .split(';')
      .filter((part, i) => i === 0 || !/^\s*domain\s*=/i.test(part))
      .join(';'),
  );
}

/** The request's headers for the device's service: hop-by-hop dropped, Host set to the target, X-Forwarded-*. */
function forwardHeaders(req: IncomingMessage, target: string, upgrade: boolean): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined || k === 'host' || k.startsWith('x-forwarded-')) continue;
    if (hopByHop.has(k) && !(upgrade && (k === 'connection' || k === 'upgrade'))) continue;
    out[k] = v;
  }
  out.host = target;
  out['x-forwarded-host'] = req.headers.host ?? '';
  out['x-forwarded-for'] = (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
  out['x-forwarded-proto'] = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  // One request per stream: the stream ends with the answer.
  if (!upgrade) out.connection = 'close';
  return out;
}

/** The page a refused tunnel request gets; a plugin's refusal message is text, escaped like the rest. */
function page(r: Refusal): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${htmlText(r.title)} - Gatehouse</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;color:#222}
h1{font-size:1.5rem}p{line-height:1.5}small{color:#666}</style></head>
<body><h1>${htmlText(r.title)}</h1><p>${htmlText(r.detail)}</p><p><small>Gatehouse HTTP tunnel &middot; ${r.status}</small></p></body></html>
`;
}
