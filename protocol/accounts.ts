import { createHash, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import koffi from 'koffi';

/** A row of /etc/passwd: who a session runs as. */
export interface LocalAccount {
  name: string;
  uid: number;
  gid: number;
  home: string;
  shell: string;
}

export function parsePasswd(text: string): LocalAccount[] {
  const accounts: LocalAccount[] = [];
  for (const line of text.split('\n')) {
    const fields = line.split(':');
    if (fields.length < 7 || line.startsWith('#')) continue;
    const [name, , uid, gid, , home, shell] = fields;
    accounts.push({
      name: name!,
      uid: Number(uid),
      gid: Number(gid),
      home: home || '/',
      shell: shell || '/bin/sh',
    });
  }
  return accounts;
}

export async function findAccount(
  name: string,
  passwdPath = '/etc/passwd',
): Promise<LocalAccount | undefined> {
  const accounts = parsePasswd(await readFile(passwdPath, 'utf8'));
  return accounts.find((account) => account.name === name);
}

/**
 * The hash field of /etc/shadow for `name`, or undefined when the user has none or the
 * account has expired (field 8: days since 1970-01-01 after which it may not sign in).
 */
export async function shadowHash(
  name: string,
  shadowPath = '/etc/shadow',
  now: Date = new Date(),
): Promise<string | undefined> {
  return shadowHashIn(await readFile(shadowPath, 'utf8'), name, now);
}

/** The same lookup in the text of a shadow file read elsewhere (a container's, through its engine). */
export function shadowHashIn(text: string, name: string, now: Date = new Date()): string | undefined {
  for (const line of text.split('\n')) {
    const fields = line.split(':');
    if (fields[0] !== name) continue;
    const expires = fields[7];
    if (expires && /^\d+$/.test(expires) && Math.floor(now.getTime() / 86_400_000) >= Number(expires)) {
      return undefined;
    }
    return fields[1];
  }
  return undefined;
}

type CryptFn = {
  async(
    phrase: string,
    setting: string,
    data: Buffer,
    done: (error: unknown, result: string | null) => void,
  ): void;
};

/**
 * crypt_r(3) from the system's libcrypt (libxcrypt on current distributions), so every
 * scheme the device itself writes to /etc/shadow is understood: yescrypt, sha512-crypt,
 * sha256-crypt, bcrypt, md5-crypt. It runs on koffi's worker thread: yescrypt is slow by
 * design and must not stall the event loop.
 */
let cryptR: CryptFn | undefined;
function systemCrypt(): CryptFn {
  if (!cryptR) {
    const lib = koffi.load('libcrypt.so.1');
    cryptR = lib.func('char *crypt_r(const char *phrase, const char *setting, void *data)') as CryptFn;
  }
  return cryptR;
}

/** sizeof(struct crypt_data) in libxcrypt; glibc's older one is smaller. */
const CRYPT_DATA_SIZE = 32768;

export function crypt(password: string, setting: string): Promise<string | undefined> {
  const data = Buffer.alloc(CRYPT_DATA_SIZE);
  return new Promise((resolve, reject) => {
    systemCrypt().async(password, setting, data, (error, result) => {
      if (error) reject(error instanceof Error ? error : new Error(String(error)));
      // libxcrypt answers a string starting with '*' for an invalid setting.
      else resolve(result && !result.startsWith('*') ? result : undefined);
    });
  });
}

export function constantTimeEqual(a: string, b: string): boolean {
  // Hash first so the comparison does not leak the length of either side.
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

/** True when `password` matches a crypt(3) hash such as a shadow entry. */
export async function passwordMatchesHash(password: string, hash: string): Promise<boolean> {
  // '!' and '*' mark locked or password-less accounts; an empty field must not mean "any password".
  if (hash === '' || hash.startsWith('!') || hash.startsWith('*')) return false;
  const computed = await crypt(password, hash);
  return computed !== undefined && constantTimeEqual(computed, hash);
}

/** A yescrypt hash of nothing useful: checked for unknown users so they cost the same time. */
const DECOY_HASH = '$y$j9T$F5Jx5fExrKuPp53xLKQ..1$X3DX6M94c7o.9agCG9G317fhZg9SqC.5i5rd.RhAtQ7';

/** Checks a password against a real local account; answers the account when it matches. */
export async function verifyLocalPassword(
  name: string,
  password: string,
  paths: { passwd?: string; shadow?: string } = {},
): Promise<LocalAccount | undefined> {
  const account = await findAccount(name, paths.passwd);
  const hash = account ? await shadowHash(name, paths.shadow) : undefined;
  return checkAccountPassword(account, hash, password);
}

/**
 * The same check on the texts of passwd and shadow files read elsewhere (a container's, through its engine, where
 * the gateway checks the password since no agent runs inside).
 */
export async function verifyPasswordIn(
  files: { passwd: string; shadow: string },
  name: string,
  password: string,
): Promise<LocalAccount | undefined> {
  const account = parsePasswd(files.passwd).find((a) => a.name === name);
  const hash = account ? shadowHashIn(files.shadow, name) : undefined;
  return checkAccountPassword(account, hash, password);
}

async function checkAccountPassword(
  account: LocalAccount | undefined,
  hash: string | undefined,
  password: string,
): Promise<LocalAccount | undefined> {
  if (!account || hash === undefined) {
    await passwordMatchesHash(password, DECOY_HASH);
    return undefined;
  }
  return (await passwordMatchesHash(password, hash)) ? account : undefined;
}
