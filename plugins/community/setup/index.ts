import type { RegisterContext } from '@gatehouse/core';
import { setupRoutes } from './routes';
import { setupUrl } from './signature';

/** First-run setup: `POST /api/setup`, and the link that creates the first user, printed when the server starts. */
export function register(ctx: RegisterContext): void {
  ctx.routes(setupRoutes);
  ctx.hooks.on('serve.ready', async ({ notice }) => {
    if (await ctx.resolve('users').any()) return;
    notice(
      `Gatehouse is running. Create the first user at:\n\n  ${setupUrl(ctx.config.publicUrl, ctx.resolve('keys'))}`,
    );
  });
}
