import type { RegisterContext } from '@gatehouse/core';
import { asClass } from 'awilix';
import { memberRoutes } from './routes';
import { MemberService } from './service';

declare module '@gatehouse/core/cradle' {
  interface Cradle {
    members: MemberService;
  }
}

/** Namespace members and their roles. */
export function register(ctx: RegisterContext): void {
  ctx.provide({ members: asClass(MemberService).singleton() });
  ctx.routes(memberRoutes);
}
