import type { Cache, InstanceFeatures, PasswordHashing, TokenService } from '@gatehouse/core';
import { Forbidden, HttpError, Unauthorized } from '@gatehouse/core';
import { type Lockout, lockedOut } from './lockout';
import type { UserService } from './service';
import { type SourceLimit, sourceBlock } from './source-limit';

/** Seconds an `X-MFA-Token` stays valid: long enough to open an authenticator app. */
export const MFA_TOKEN_TTL = 300;
/** How long an address where an account signed in stays known for it (its checks go first under a flood). */
const KNOWN_SOURCE_SECONDS = 30 * 86_400;

/**
 * An SSO-only instance (enterprise SAML with `saml.localLogin` false; `GET /info` then reports `local: false`) takes
 * no sign-in by password or by the codes that stand in for one.
 */
export function requireLocalSignIn(features: InstanceFeatures): void {
  if (!features.authentication.local) {
    throw new Forbidden('password sign-in is turned off on this instance: sign in with single sign-on');
  }
}

/**
 * Password sign-in: by username or e-mail, with the (source, user) lockout (lockout.ts) checked
 * and counted before any password hash is spent, and the MFA step when the user has it on. Before both, the source's
 * budget of failed logins (any user); the hash itself waits for a slot of the bounded hashing (429 when full), ahead
 * of others when the account signed in from this address before.
 */
export class LoginService {
  private readonly deps: {
    users: UserService;
    lockout: Lockout;
    tokens: TokenService;
    passwords: PasswordHashing;
    sourceLimit: SourceLimit;
    cache: Cache;
    features: InstanceFeatures;
  };
  constructor(deps: LoginService['deps']) {
    this.deps = deps;
  }

  async login(identifier: string, password: string, source: string) {
    const { users, lockout, tokens, passwords, sourceLimit, cache, features } = this.deps;
    requireLocalSignIn(features);
    const attempt = await sourceLimit.take('login', source);
    const user = await users.findByLogin(identifier);
    // Unknown names are counted under the name typed, so probing them locks out the same way.
    const subject = user?.id ?? identifier;
    const knownKey = `login:known:${sourceBlock(source)}:${subject}`;
    const known = user ? (await cache.get(knownKey)) !== null : false;
    const guess = await lockout
      .guess('login', source, subject, () =>
        user
          ? passwords.verify(password, user.password_hash, source, known)
          : passwords.burn(password, source),
      )
      .catch(async (err: unknown) => {
        // A locked pair is a failed attempt; a full hashing queue or a store error is not the caller's failure.
        if (!(err instanceof HttpError && 'X-Account-Lockout' in err.headers)) await attempt.refund();
        throw err;
      });
    if (user && guess.ok) {
      await attempt.refund();
      await cache.set(knownKey, '1', KNOWN_SOURCE_SECONDS);
    }
    if (!user || !guess.ok) {
      if (guess.lockedUntil) throw lockedOut(guess.lockedUntil);
      throw new Unauthorized('invalid username or password', { 'X-Account-Lockout': '0' });
    }
    if (user.mfa_enabled) {
      const mfaToken = await tokens.sign(
        { kind: 'mfa', sub: user.id, pwd: new Date(user.password_changed_at).getTime() },
        MFA_TOKEN_TTL,
      );
      throw new Unauthorized('multi-factor authentication required', {
        'X-MFA-Token': mfaToken,
        'Access-Control-Expose-Headers': 'X-MFA-Token',
      });
    }
    await users.touchLogin(user.id);
    return users.authResult(user);
  }
}
