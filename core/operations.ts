import Router from '@koa/router';
import type { Context } from 'koa';
import { secretsEqual } from './auth/password';
import type { Kernel } from './boot';
import { NotFound, Unauthorized } from './errors';
import { storeDown } from './store/health';

const editionDocs = ['community', 'cloud'] as const;

/**
 * Operational endpoints: liveness, readiness (the store answers), Prometheus metrics (internal, or with a token), and the OpenAPI documents
 * of the community and cloud editions, generated from the route tables of those editions' plugins.
 */
export function operationsRouter(kernel: Kernel, isInternal: (ctx: Context) => boolean): Router {
  const router = new Router();
  const docs = new Map<string, Promise<Record<string, unknown>>>();

  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    // Bounded: a store that does not answer within two seconds is not ready (and is marked down).
    if (!(await kernel.container.cradle.storeHealth.check())) throw storeDown();
    ctx.body = { status: 'ready' };
  });
  // Metrics name routes, counts and timings an outsider has no business reading: on the internal listener always,
  // on the public one only with `metrics.token` set and sent as a bearer token (for a scraper outside the host).
  router.get('/metrics', async (ctx) => {
    if (!isInternal(ctx)) {
      const token = kernel.config.metrics.token;
      if (!token) throw new NotFound('route');
      const sent = /^Bearer\s+(\S+)$/i.exec(ctx.get('authorization'))?.[1] ?? '';
      if (!secretsEqual(sent, token)) throw new Unauthorized();
    }
    ctx.type = kernel.metrics.registry.contentType;
    ctx.body = await kernel.metrics.registry.metrics();
  });
  for (const edition of editionDocs) {
    router.get(`/openapi/${edition}.json`, async (ctx) => {
      if (!docs.has(edition)) docs.set(edition, openapiFor(kernel, edition));
      ctx.body = await docs.get(edition);
    });
  }
  return router;
}

/** The document of an edition: this kernel's own when it runs that edition, else one registered for it. */
export async function openapiFor(kernel: Kernel, edition: string): Promise<Record<string, unknown>> {
  if (kernel.config.edition === edition) return kernel.openapi();
  const { Kernel: K } = await import('./boot');
  const other = await K.create({
    env: {},
    resolvePlugin: kernel.resolvePlugin,
    overrides: { edition, log: { level: 'silent', pretty: false } },
  });
  return other.openapi();
}
