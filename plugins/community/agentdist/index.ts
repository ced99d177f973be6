import type { RegisterContext } from '@gatehouse/core';
import { agentDistRoutes } from './routes';

/** The agent's install script and bundles, served to devices. */
export function register(ctx: RegisterContext): void {
  ctx.routes(agentDistRoutes);
}
