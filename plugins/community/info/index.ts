import type { RegisterContext } from '@gatehouse/core';
import { infoRoutes } from './routes';

/** `GET /info`: what agents and the console learn about the instance. */
export function register(ctx: RegisterContext): void {
  ctx.routes(infoRoutes);
}
