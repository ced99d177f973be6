import type { RegisterContext } from '@gatehouse/core';
import { asClass } from 'awilix';
import { adminRoutes } from './routes';
import { AdminService } from './service';

declare module '@gatehouse/core/cradle' {
  interface Cradle {
    admin: AdminService;
  }
}

/** Instance administration (`/api/admin/...`); its CLI commands are in ./cli.ts, listed by the manifest. */
export function register(ctx: RegisterContext): void {
  ctx.provide({ admin: asClass(AdminService).singleton() });
  ctx.routes(adminRoutes);
}
