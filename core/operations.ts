import Router from '@koa/router';
import type { Context } from 'koa';
import { secretsEqual } from './auth/password';
import type { Config } from './config/schema';
import { NotFound, Unauthorized } from './errors';
import type { Metrics } from './metrics';
import { type StoreHealth, storeDown } from './store/health';

/** The OpenAPI documents a server publishes: of which editions, and how one is made. */
export interface PublishedDocuments {
  editions: readonly string[];
  of(edition: string): Promise<Record<string, unknown>>;
}

/**
 * Operational endpoints: liveness, readiness (the store answers), Prometheus metrics (internal, or with a token), and
 * the OpenAPI documents of the published editions (`/openapi/<edition>.json`), each made once, when first asked for.
 */
export function operationsRouter(deps: {
  config: Config;
  metrics: Metrics;
  health: StoreHealth;
  isInternal: (ctx: Context) => boolean;
  documents: PublishedDocuments;
}): Router {
  const { config, metrics, health, isInternal, documents } = deps;
  const router = new Router();
  const docs = new Map<string, Promise<Record<string, unknown>>>();

  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    // Bounded: a store that does not answer within two seconds is not ready (and is marked down).
    if (!(await health.check())) throw storeDown();
    ctx.body = { status: 'ready' };
  });
  // Metrics name routes, counts and timings an outsider has no business reading: on the internal listener always,
  // on the public one only with `metrics.token` set and sent as a bearer token (for a scraper outside the host).
  router.get('/metrics', async (ctx) => {
    if (!isInternal(ctx)) {
      const token = config.metrics.token;
      if (!token) throw new NotFound('route');
      const sent = /^Bearer\s+(\S+)$/i.exec(ctx.get('authorization'))?.[1] ?? '';
      if (!secretsEqual(sent, token)) throw new Unauthorized();
    }
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  });
  for (const edition of documents.editions) {
    router.get(`/openapi/${edition}.json`, async (ctx) => {
      if (!docs.has(edition)) docs.set(edition, documents.of(edition));
      ctx.body = await docs.get(edition);
    });
  }
  return router;
}
