import type { RegisterContext } from '@gatehouse/core';
import { statsRoutes } from './routes';

/** `GET /api/stats`: counts of the namespace, which other features fill in through `stats.collect`. */
export function register(ctx: RegisterContext): void {
  ctx.routes(statsRoutes);
}
