import type { RegisterContext } from '@gatehouse/core';
import { asClass } from 'awilix';
import { apiKeyRoutes } from './routes';
import { ApiKeyService, resolveApiKey } from './service';

declare module '@gatehouse/core/cradle' {
  interface Cradle {
    /** Request-scoped: the API keys of the caller's namespace. */
    apiKeys: ApiKeyService;
  }
}

/** API keys: their calls, and how an `X-API-Key` header becomes a caller. */
export function register(ctx: RegisterContext): void {
  ctx.provide({ apiKeys: asClass(ApiKeyService).scoped() });
  ctx.routes(apiKeyRoutes);
  ctx.resolvers({ apiKey: (key) => resolveApiKey(ctx.resolve('db'), key) });
}
