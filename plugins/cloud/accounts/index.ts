import { HttpError, type RegisterContext } from '@gatehouse/core';
import { asClass } from 'awilix';
import { MailLimit } from './mail-limit';
import { Outbox } from './outbox';
import { accountRoutes } from './routes';
import { AccountService, UNVERIFIED } from './service';
import { AccountTokens } from './tokens';

declare module '@gatehouse/core/cradle' {
  interface Cradle {
    accounts: AccountService;
    accountTokens: AccountTokens;
    /** Mail sent after the answer (sign-up, recovery, invitations). */
    outbox: Outbox;
    mailLimit: MailLimit;
  }
}

/** Sign-up, e-mail verification, password recovery and account deletion. */
export function registerAccounts(ctx: RegisterContext): void {
  ctx.provide({
    accounts: asClass(AccountService).singleton(),
    accountTokens: asClass(AccountTokens).singleton(),
    outbox: asClass(Outbox)
      .singleton()
      .disposer((o) => o.drained()),
    mailLimit: asClass(MailLimit).singleton(),
  });
  ctx.routes(accountRoutes);
  ctx.hooks.on('user.signIn', ({ user }) => {
    if (user.status === UNVERIFIED) {
      throw new HttpError(
        403,
        `the e-mail address of this account is not verified yet: follow the link sent to ${user.email}, or ask for a new one`,
        { code: 'email_unverified' },
      );
    }
  });
}
