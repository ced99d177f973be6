import type { RegisterContext } from '@gatehouse/core';
import { asClass } from 'awilix';
import { registerTagHolders } from './holders';
import { tagRoutes } from './routes';
import { TagService } from './service';

declare module '@gatehouse/core/cradle' {
  interface Cradle {
    /** Request-scoped: device tags and the tag calls of the caller's namespace. */
    tags: TagService;
  }
}

/** Tags of a namespace: the calls, and the holders (public keys, firewall rules) that the tag calls reach. */
export function register(ctx: RegisterContext): void {
  ctx.provide({ tags: asClass(TagService).scoped() });
  ctx.routes(tagRoutes);
  registerTagHolders(ctx);
}
