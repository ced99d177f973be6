import { burnPasswordCheck, Unauthorized, verifyPassword } from '@gatehouse/core';
import type { UserService } from './service';

/** Password sign-in. Lockout and MFA (accounts issue) wrap this. */
export class LoginService {
  private readonly deps: { users: UserService };
  constructor(deps: { users: UserService }) {
    this.deps = deps;
  }

  async login(identifier: string, password: string) {
    const user = await this.deps.users.findByLogin(identifier);
    const ok = user ? await verifyPassword(password, user.password_hash) : await burnPasswordCheck(password);
    if (!user || !ok) throw new Unauthorized('invalid username or password');
    return this.deps.users.authResult(user);
  }
}
