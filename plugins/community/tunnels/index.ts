import type { RegisterContext } from '@gatehouse/core';
import { asClass, asFunction } from 'awilix';
import { TunnelProxy } from './proxy';
import { tunnelRoutes } from './routes';
import { TunnelService } from './service';

declare module '@gatehouse/core/cradle' {
  interface Cradle {
    /** Request-scoped: the HTTP tunnels of the caller's devices. */
    tunnels: TunnelService;
    tunnelProxy: TunnelProxy;
  }
}

/**
 * HTTP tunnels: the calls that manage a device's tunnels, and the proxy that answers `<address>.<tunnels domain>`
 * (plain requests before routing, and upgrades). Registered before devices: a site behind a tunnel may well have
 * its own /agent/connection path, so tunnel hosts take upgrades first.
 */
export function register(ctx: RegisterContext): void {
  let proxy: TunnelProxy | undefined;
  ctx.provide({
    tunnels: asClass(TunnelService).scoped(),
    tunnelProxy: asFunction((cradle: ConstructorParameters<typeof TunnelProxy>[0]) => {
      proxy = new TunnelProxy(cradle);
      return proxy;
    }).singleton(),
  });
  ctx.routes(tunnelRoutes);
  ctx.middleware((koa, next) => ctx.resolve('tunnelProxy').middleware(koa, next));
  ctx.upgrade(
    (req, socket, head) => ctx.resolve('tunnelProxy').upgrade(req, socket, head),
    async () => proxy?.stop(),
  );
}
