import type { RegisterContext } from '@gatehouse/core';
import { asClass } from 'awilix';
import { invitationRoutes } from './routes';
import { InvitationService } from './service';

declare module '@gatehouse/core/cradle' {
  interface Cradle {
    invitations: InvitationService;
  }
}

/** E-mailed namespace invitations: members stay pending until they accept. */
export function registerInvitations(ctx: RegisterContext): void {
  ctx.provide({ invitations: asClass(InvitationService).singleton() });
  ctx.routes(invitationRoutes);
  ctx.hooks.on('member.invite', (invite) => ctx.resolve('invitations').pending(invite));
}
