import { AGENT_PROTOCOL } from '@gatehouse/agent/protocol';
import { type RegisterContext, TunnelHub, Unauthorized } from '@gatehouse/core';
import { asClass, asFunction } from 'awilix';
import { statsRoutes } from '../stats/routes';
import { tagRoutes } from '../tags/routes';
import { TagService } from '../tags/service';
import { TunnelProxy } from '../tunnels/proxy';
import { tunnelRoutes } from '../tunnels/routes';
import { TunnelService } from '../tunnels/service';
import { AcceptanceWaits } from './acceptance';
import { DevicePresence } from './presence';
import { deviceRoutes } from './routes';
import { DeviceService } from './service';

declare module '@gatehouse/core/cradle' {
  interface Cradle {
    /** Devices and containers; `findForSsh` for the SSH gateway. */
    devices: DeviceService;
    /** Live agent tunnels: `isOnline(uid)` here, `reachable(uid)` on any instance, `open(uid, header)`. */
    tunnelHub: TunnelHub;
    tunnelPresence: DevicePresence;
    /** Pending agents waiting for their acceptance (`GET /api/devices/auth/wait`). */
    acceptanceWaits: AcceptanceWaits;
    tags: TagService;
    tunnels: TunnelService;
    tunnelProxy: TunnelProxy;
  }
}

/**
 * Devices, containers, tags, stats and the agent tunnel hub (issue 4, server side): container entries, routes,
 * the `/agent/connection` upgrade and the HTTP tunnel proxy.
 */
export function registerDevices(ctx: RegisterContext): void {
  let hub: TunnelHub | undefined;
  let proxy: TunnelProxy | undefined;
  ctx.provide({
    devices: asClass(DeviceService).singleton(),
    acceptanceWaits: asClass(AcceptanceWaits).singleton(),
    tunnelPresence: asClass(DevicePresence).singleton(),
    tunnelHub: asFunction((cradle: ConstructorParameters<typeof TunnelHub>[0]) => {
      hub = new TunnelHub(cradle);
      return hub;
    }).singleton(),
    tags: asClass(TagService).singleton(),
    tunnels: asClass(TunnelService).singleton(),
    tunnelProxy: asFunction((cradle: ConstructorParameters<typeof TunnelProxy>[0]) => {
      proxy = new TunnelProxy(cradle);
      return proxy;
    }).singleton(),
  });
  ctx.routes([...deviceRoutes, ...tagRoutes, ...statsRoutes, ...tunnelRoutes]);
  ctx.resolvers({
    // A device token stands only while its device exists in the token's namespace and is not removed.
    device: async (claims) => {
      if (typeof claims.tenant !== 'string') throw new Unauthorized();
      // Only tokens issued after a proof of possession of the device key (agent protocol 2).
      if (claims.ap !== AGENT_PROTOCOL) throw new Unauthorized();
      const row = (await ctx
        .resolve('db')('devices')
        .where({ uid: claims.sub, tenant_id: claims.tenant })
        .whereNot('status', 'removed')
        .first('uid')) as { uid: string } | undefined;
      if (!row) throw new Unauthorized();
      return { kind: 'device', uid: row.uid, tenantId: claims.tenant };
    },
  });
  ctx.middleware((koa, next) => ctx.resolve('tunnelProxy').middleware(koa, next));
  // Tunnel hosts first: a site behind a tunnel may well have its own /agent/connection path.
  ctx.upgrade(
    (req, socket, head) => ctx.resolve('tunnelProxy').upgrade(req, socket, head),
    async () => proxy?.stop(),
  );
  ctx.upgrade(
    (req, socket, head) => ctx.resolve('tunnelHub').upgrade(req, socket, head),
    async () => {
      // Held acceptance waits are answered first: HTTP closes only once its requests are.
      await ctx.resolve('acceptanceWaits').stop();
      await hub?.stop();
    },
  );
  // Streams other instances ask for, to agents whose tunnels are here (several instances, DESIGN.md section 9).
  ctx.internalUpgrade((req, socket, head) => ctx.resolve('tunnelHub').forwardUpgrade(req, socket, head));
}
