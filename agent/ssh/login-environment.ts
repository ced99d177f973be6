import { userInfo } from 'node:os';
import type { LocalAccount } from './local-accounts';

/** The account the agent itself runs as (single-user mode runs every session as it). */
export function agentAccount(): LocalAccount {
  const me = userInfo();
  return { name: me.username, uid: me.uid, gid: me.gid, home: me.homedir, shell: me.shell || '/bin/sh' };
}

const ROOT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const USER_PATH = '/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games';

/**
 * Client-sent variables we pass on, as OpenSSH's default `AcceptEnv LANG LC_*` does:
 * anything else (LD_PRELOAD, PATH) would let a client change how the login runs.
 */
export function acceptableClientVariable(name: string): boolean {
  return name === 'LANG' || name === 'TZ' || name === 'COLORTERM' || /^LC_[A-Z_]+$/.test(name);
}

/** A fresh login environment for `account`, as login(1) would build it. */
export function loginEnvironment(
  account: LocalAccount,
  extra: Record<string, string>,
): Record<string, string> {
  return {
    HOME: account.home,
    USER: account.name,
    LOGNAME: account.name,
    SHELL: account.shell,
    PATH: account.uid === 0 ? ROOT_PATH : USER_PATH,
    MAIL: `/var/mail/${account.name}`,
    ...extra,
  };
}

/** uid/gid spawn options: only when the agent can and must switch user. */
export function switchUserOptions(account: LocalAccount): { uid?: number; gid?: number } {
  const self = process.getuid?.();
  if (self !== 0 || account.uid === self) return {};
  return { uid: account.uid, gid: account.gid };
}
