import { type RegisterContext, TenantStore, Unauthorized } from '@gatehouse/core';
import type { Cradle } from '@gatehouse/core/cradle';
import { AGENT_PROTOCOL } from '@gatehouse/protocol/agent-proof';
import { asClass, asFunction } from 'awilix';
import { devicePeers } from '../agent-tunnels/device-peers';
import { TunnelHub } from '../agent-tunnels/hub';
import { AcceptanceWaits } from './acceptance';
import { Device } from './model';
import { DevicePresence, registerPresence } from './presence';
import { deviceRoutes } from './routes';
import { DeviceService, NamespaceDevices } from './service';

declare module '@gatehouse/core/cradle' {
  interface Cradle {
    /** Devices and containers; `findForSsh` for the SSH gateway. */
    devices: DeviceService;
    /** Request-scoped: the devices and containers of the caller's namespace, as the API lists and changes them. */
    namespaceDevices: NamespaceDevices;
    /** Live agent tunnels: `isOnline(uid)` here, `reachable(uid)` on any instance, `open(uid, header)`. */
    tunnelHub: TunnelHub;
    tunnelPresence: DevicePresence;
    /** Pending agents waiting for their acceptance (`GET /api/devices/auth/wait`). */
    acceptanceWaits: AcceptanceWaits;
  }
}

/**
 * Devices and containers, and the agent tunnel hub: container entries, routes, how a device
 * token becomes a caller, and the `/agent/connection` upgrade.
 */
export function register(ctx: RegisterContext): void {
  let hub: TunnelHub | undefined;
  ctx.provide({
    devices: asClass(DeviceService).singleton(),
    namespaceDevices: asClass(NamespaceDevices).scoped(),
    acceptanceWaits: asClass(AcceptanceWaits).singleton(),
    tunnelPresence: asClass(DevicePresence).singleton(),
    tunnelHub: asFunction((cradle: Cradle) => {
      // Nonces of tunnel proofs seen within the window (replay) are kept in the shared cache.
      hub = new TunnelHub(
        cradle,
        devicePeers({ tokens: cradle.tokens, hooks: cradle.hooks, nonces: cradle.cache }),
      );
      return hub;
    }).singleton(),
  });
  registerPresence(ctx);
  ctx.routes(deviceRoutes);
  ctx.resolvers({
    // A device token stands only while its device exists in the token's namespace and is not removed.
    device: async (claims) => {
      if (typeof claims.tenant !== 'string') throw new Unauthorized();
      // Only tokens issued after a proof of possession of the device key (agent protocol 2).
      if (claims.ap !== AGENT_PROTOCOL) throw new Unauthorized();
      // No request scope yet (this makes the caller): the token's namespace is the tenant the look-up is bound to.
      const row = await new TenantStore(ctx.resolve('db'), claims.tenant)
        .query(Device)
        .findById(String(claims.sub))
        .whereNot('status', 'removed')
        .select('uid');
      if (!row) throw new Unauthorized();
      return { kind: 'device', uid: row.uid, tenantId: claims.tenant };
    },
  });
  ctx.upgrade(
    (req, socket, head) => ctx.resolve('tunnelHub').upgrade(req, socket, head),
    async () => {
      // Held acceptance waits are answered first: HTTP closes only once its requests are.
      await ctx.resolve('acceptanceWaits').stop();
      await hub?.stop();
    },
  );
  // Streams other instances ask for, to agents whose tunnels are here (several instances, see docs/content/developers/architecture.md).
  ctx.internalUpgrade((req, socket, head) => ctx.resolve('tunnelHub').forwardUpgrade(req, socket, head));
}
