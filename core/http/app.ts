import type { AwilixContainer } from 'awilix';
import type Koa from 'koa';
import type { Config } from '../config/schema';
import type { Declarations } from '../declarations';
import type { Listeners } from '../listeners';
import type { Logger } from '../log';
import type { Metrics } from '../metrics';
import { operationsRouter, type PublishedDocuments } from '../operations';
import type { PluginManifest } from '../plugin';
import type { StoreHealth } from '../store/health';
import { consoleModulesRouter } from './console-modules';
import type { Cradle } from './route';
import { buildRouter } from './router';
import { createHttpApp } from './server';

/**
 * The one application every HTTP listener serves: the operational endpoints, the plugins' routes, their console
 * modules and the console, behind the plugins' early middleware.
 */
export function serverApp(deps: {
  config: Config;
  consoleDir: string;
  log: Logger;
  metrics: Metrics;
  container: AwilixContainer<Cradle>;
  declarations: Declarations;
  plugins: readonly PluginManifest[];
  listeners: Listeners;
  health: StoreHealth;
  documents: PublishedDocuments;
}): Koa {
  const { config, log, metrics, container, declarations, listeners, health } = deps;
  const api = buildRouter(declarations.routes, container, {
    tokens: () => container.cradle.tokens,
    resolvers: declarations.resolvers,
    isInternal: listeners.isInternal,
    isLocal: listeners.isLocal,
    health,
  });
  const ops = operationsRouter({
    config,
    metrics,
    health,
    isInternal: listeners.isInternal,
    documents: deps.documents,
  });
  return createHttpApp({
    config,
    consoleDir: deps.consoleDir,
    log,
    metrics,
    routers: [ops, api, consoleModulesRouter(deps.plugins, log)],
    early: declarations.early,
    health,
  });
}
