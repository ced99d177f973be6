import type { RegisterContext } from '@gatehouse/core';

/** `GET /api/stats` active_sessions comes from the store (any server may answer it), not from this server's map. */
export function registerSessionStats(ctx: RegisterContext): void {
  ctx.hooks.on('stats.collect', async ({ tenantId, stats }) => {
    stats.active_sessions = await ctx.resolve('sessions').countActive(tenantId);
  });
}
