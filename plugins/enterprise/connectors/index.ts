import type { BootContext, RegisterContext } from '@gatehouse/core';
import { asClass } from 'awilix';
import { ContainerDevices } from './containers';
import { connectorRoutes } from './routes';
import { CONNECTOR_TLS, ConnectorService } from './service';
import { ContainerDialer } from './sessions';
import { ConnectorWatchers } from './watchers';

declare module '@gatehouse/core/cradle' {
  interface Cradle {
    connectors: ConnectorService;
    /** One event-stream watcher per enabled connector in the installation (leases in the shared cache). */
    connectorWatchers: ConnectorWatchers;
    containerDevices: ContainerDevices;
    /** The gateway's upstream for containers: sessions as execs through the engine. */
    containerDialer: ContainerDialer;
  }
}

/**
 * Connectors to container engines (issue 14): the `/api/connector` calls, the watchers that keep each running
 * container of an enabled connector as a device under `/api/containers`, and container sessions through the
 * gateway and the web terminal (an upstream of execs through the engine).
 */
export function registerConnectors(ctx: RegisterContext): void {
  ctx.provide({
    connectors: asClass(ConnectorService).scoped(),
    containerDevices: asClass(ContainerDevices).singleton(),
    containerDialer: asClass(ContainerDialer).singleton(),
    connectorWatchers: asClass(ConnectorWatchers)
      .singleton()
      .disposer((w) => w.stop()),
  });
  ctx.routes(connectorRoutes);
  ctx.sealed(CONNECTOR_TLS);
}

/** Adds the containers' upstream to the gateway and starts watching the engines of enabled connectors. */
export async function bootConnectors(ctx: BootContext): Promise<void> {
  const { sshGateway, containerDialer, connectorWatchers } = ctx.container.cradle;
  sshGateway.addDialer(containerDialer);
  await connectorWatchers.start();
}
