import type { RegisterContext } from '@gatehouse/core';
import { asClass } from 'awilix';
import { namespaceRoutes } from './routes';
import { NamespaceService } from './service';

declare module '@gatehouse/core/cradle' {
  interface Cradle {
    namespaces: NamespaceService;
  }
}

/** Namespaces (tenants): create, rename, settings, delete. */
export function register(ctx: RegisterContext): void {
  ctx.provide({ namespaces: asClass(NamespaceService).singleton() });
  ctx.routes(namespaceRoutes);
}
