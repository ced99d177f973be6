import type { RegisterContext } from '@gatehouse/core';
import { asClass } from 'awilix';
import { sessionRoutes } from './routes';
import { NamespaceSessions, SessionService } from './service';

declare module '@gatehouse/core/cradle' {
  interface Cradle {
    /** Sessions and their recordings: the gateway records them, the API lists, plays and closes them. */
    sessions: SessionService;
    /** Request-scoped: the sessions of the caller's namespace, as the API lists, plays and closes them. */
    namespaceSessions: NamespaceSessions;
  }
}

/** Sessions and recordings: the calls, the service the gateway records through, and their part of `/api/stats`. */
export function register(ctx: RegisterContext): void {
  ctx.provide({
    sessions: asClass(SessionService).singleton(),
    namespaceSessions: asClass(NamespaceSessions).scoped(),
  });
  ctx.routes(sessionRoutes);
  // active_sessions comes from the store (any server may answer it), not from this server's map.
  ctx.hooks.on('stats.collect', async ({ tenantId, stats }) => {
    stats.active_sessions = await ctx.resolve('sessions').countActive(tenantId);
  });
}
