import { Mailer } from '@gatehouse/core';
import { asClass } from 'awilix';
import { ApiKeyService } from '../apikeys/service';
import { MemberService } from '../members/service';
import { MfaService } from '../mfa/service';
import { Lockout } from './lockout';
import { SourceLimit } from './source-limit';

declare module '@gatehouse/core/cradle' {
  interface Cradle {
    lockout: Lockout;
    sourceLimit: SourceLimit;
    mfa: MfaService;
    members: MemberService;
    /** Request-scoped: the API keys of the caller's namespace. */
    apiKeys: ApiKeyService;
  }
}

/** Container entries of the accounts features: lockout, per-source login limit, MFA, members, API keys and the one mailer. */
export const accountServices = {
  lockout: asClass(Lockout).singleton(),
  sourceLimit: asClass(SourceLimit).singleton(),
  // Reset mails go out after their answer: shutdown waits for them.
  mfa: asClass(MfaService)
    .singleton()
    .disposer((m) => m.mailsSent()),
  members: asClass(MemberService).singleton(),
  apiKeys: asClass(ApiKeyService).scoped(),
  mailer: asClass(Mailer)
    .singleton()
    .disposer((m) => m.close()),
};
