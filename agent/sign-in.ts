import {
  constantTimeEqual,
  findAccount,
  type LocalAccount,
  passwordMatchesHash,
  verifyLocalPassword,
} from '@gatehouse/protocol/accounts';
import { agentAccount } from './ssh-server/login-environment';

export interface SignInOptions {
  /**
   * Single-user mode: this password (or a crypt(3) hash of it, starting with `$`) signs anyone in, and every
   * session runs as the agent's own user.
   */
  singleUserPassword?: string;
  /** Where the local accounts live (tests point these at fixtures). */
  accountFiles?: { passwd?: string; shadow?: string };
}

/**
 * Who may sign in on this device, and as which account: the device's own accounts (shadow hashes), or the agent's
 * user in single-user mode. The agent's SSH server and the session protocol both ask it.
 */
export class DeviceSignIn {
  constructor(private readonly options: SignInOptions) {}

  /** The account a password signs in to, or undefined when it signs in to none. */
  async password(username: string, password: string): Promise<LocalAccount | undefined> {
    const single = this.options.singleUserPassword;
    if (single !== undefined) {
      const ok = single.startsWith('$')
        ? await passwordMatchesHash(password, single)
        : constantTimeEqual(password, single);
      return ok ? agentAccount() : undefined;
    }
    return verifyLocalPassword(username, password, this.options.accountFiles);
  }

  /** The account a sign-in the server vouched for (the gateway key) runs as. */
  async account(username: string): Promise<LocalAccount | undefined> {
    if (this.options.singleUserPassword !== undefined) return agentAccount();
    return findAccount(username, this.options.accountFiles?.passwd);
  }
}
