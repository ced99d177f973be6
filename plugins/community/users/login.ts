import type { TokenService } from '@gatehouse/core';
import { burnPasswordCheck, Unauthorized, verifyPassword } from '@gatehouse/core';
import { type Lockout, lockedOut } from './lockout';
import type { UserService } from './service';

/** Seconds an `X-MFA-Token` stays valid: long enough to open an authenticator app. */
export const MFA_TOKEN_TTL = 300;

/**
 * Password sign-in (SPEC.md section 7): by username or e-mail, with the (source, user) lockout of section 4 checked
 * and counted before any password hash is spent, and the MFA step when the user has it on.
 */
export class LoginService {
  private readonly deps: { users: UserService; lockout: Lockout; tokens: TokenService };
  constructor(deps: { users: UserService; lockout: Lockout; tokens: TokenService }) {
    this.deps = deps;
  }

  async login(identifier: string, password: string, source: string) {
    const { users, lockout, tokens } = this.deps;
    const user = await users.findByLogin(identifier);
    // Unknown names are counted under the name typed, so probing them locks out the same way.
    const subject = user?.id ?? identifier;
    const guess = await lockout.guess('login', source, subject, () =>
      user ? verifyPassword(password, user.password_hash) : burnPasswordCheck(password),
    );
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
