import type { RegisterContext } from '@gatehouse/core';
import { asClass } from 'awilix';
import { Lockout } from './lockout';
import { LoginService } from './login';
import { userRoutes } from './routes';
import { UserService } from './service';
import { SourceLimit } from './source-limit';

declare module '@gatehouse/core/cradle' {
  interface Cradle {
    users: UserService;
    logins: LoginService;
    lockout: Lockout;
    sourceLimit: SourceLimit;
  }
}

/** Users and signing in: accounts, login with its lockout and per-source limit, and how a user token becomes a caller. */
export function register(ctx: RegisterContext): void {
  ctx.provide({
    users: asClass(UserService).singleton(),
    logins: asClass(LoginService).singleton(),
    lockout: asClass(Lockout).singleton(),
    sourceLimit: asClass(SourceLimit).singleton(),
  });
  ctx.routes(userRoutes);
  // One check for every entry point that takes a user token (the REST calls and the web terminal's tickets).
  ctx.resolvers({ user: (claims) => ctx.resolve('users').callerFor(claims) });
}
