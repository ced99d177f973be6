import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import type { LocalAccount } from '@gatehouse/protocol/accounts';

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

const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'];

/** How to start `file args` as `account`. */
export interface UserCommand {
  file: string;
  args: string[];
  spawnOptions: { uid?: number; gid?: number };
}

/**
 * Node's spawn switches uid and gid but clears the supplementary groups (libuv calls
 * setgroups(0)), so a user in `sudo` or `docker` would lose them. util-linux's setpriv
 * sets uid, gid and the account's groups (initgroups) before exec'ing the program; without
 * it we fall back to spawn's switch and the account's primary group only.
 */
export function commandAs(account: LocalAccount, file: string, args: string[]): UserCommand {
  const options = switchUserOptions(account);
  const setpriv = SETPRIV.find((path) => existsSync(path));
  if (options.uid === undefined || !setpriv) return { file, args, spawnOptions: options };
  return {
    file: setpriv,
    args: [
      '--reuid',
      String(account.uid),
      '--regid',
      String(account.gid),
      '--init-groups',
      '--',
      file,
      ...args,
    ],
    spawnOptions: {},
  };
}
