import type { RegisterContext } from '@gatehouse/core';
import { asClass } from 'awilix';
import { mfaRoutes } from './routes';
import { MFA_SECRETS, MfaService } from './service';

declare module '@gatehouse/core/cradle' {
  interface Cradle {
    mfa: MfaService;
  }
}

/** Multi-factor authentication: TOTP secrets (sealed at rest), recovery codes and e-mailed resets. */
export function register(ctx: RegisterContext): void {
  ctx.provide({
    // Reset mails go out after their answer: shutdown waits for them.
    mfa: asClass(MfaService)
      .singleton()
      .disposer((m) => m.mailsSent()),
  });
  ctx.routes(mfaRoutes);
  ctx.sealed(MFA_SECRETS);
}
