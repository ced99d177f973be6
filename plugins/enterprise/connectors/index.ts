import type { BootContext, RegisterContext } from '@gatehouse/core';
import type { Cradle } from '@gatehouse/core/cradle';
import { TunnelHub } from '@gatehouse/plugin-community';
import { asClass, asFunction } from 'awilix';
import { ContainerDevices } from './containers';
import { connectorRoutes } from './routes';
import { CONNECTOR_TLS, ConnectorService } from './service';
import { ContainerDialer } from './sessions';
import { connectorPeers } from './tunnel';
import { ConnectorWatchers } from './watchers';

declare module '@gatehouse/core/cradle' {
  interface Cradle {
    connectors: ConnectorService;
    /** Live tunnels of connector processes (`/connector/connection`), the only way to a connector's engine. */
    connectorTunnels: TunnelHub;
    /** One event-stream watcher per enabled, connected connector in the installation. */
    connectorWatchers: ConnectorWatchers;
    containerDevices: ContainerDevices;
    /** The gateway's upstream for containers: sessions as execs through the engine. */
    containerDialer: ContainerDialer;
  }
}

/**
 * Connectors to container engines: the `/api/connector` calls, the tunnels their processes dial in with, the
 * watchers that keep each running container of an enabled connector as a device under `/api/containers`, and
 * container sessions through the gateway and the web terminal (an upstream of execs through the engine).
 */
export function registerConnectors(ctx: RegisterContext): void {
  let hub: TunnelHub | undefined;
  ctx.provide({
    connectors: asClass(ConnectorService).scoped(),
    containerDevices: asClass(ContainerDevices).singleton(),
    containerDialer: asClass(ContainerDialer).singleton(),
    connectorTunnels: asFunction((cradle: Cradle) => {
      hub = new TunnelHub(
        cradle,
        connectorPeers({
          db: cradle.db,
          // The watchers start and stop with the tunnels this instance holds.
          online: (uid, remoteAddr) => cradle.connectorWatchers.online(uid, remoteAddr),
          offline: (uids) => cradle.connectorWatchers.offline(uids),
        }),
      );
      return hub;
    }).singleton(),
    connectorWatchers: asClass(ConnectorWatchers)
      .singleton()
      .disposer((w) => w.stop()),
  });
  ctx.routes(connectorRoutes);
  ctx.sealed(CONNECTOR_TLS);
  ctx.upgrade(
    (req, socket, head) => ctx.resolve('connectorTunnels').upgrade(req, socket, head),
    async () => {
      await hub?.stop();
    },
  );
  ctx.internalUpgrade((req, socket, head) =>
    ctx.resolve('connectorTunnels').forwardUpgrade(req, socket, head),
  );
}

/** Adds the containers' upstream to the gateway and starts watching the engines of connected connectors. */
export async function bootConnectors(ctx: BootContext): Promise<void> {
  const { sshGateway, containerDialer, connectorWatchers, connectorTunnels } = ctx.container.cradle;
  sshGateway.addDialer(containerDialer);
  await connectorTunnels.listen();
  await connectorWatchers.start();
}
