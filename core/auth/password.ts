import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/**
 * Password hashing with scrypt (RFC 7914). Parameters follow OWASP's scrypt guidance (N=2^15, r=8, p=3: 32 MiB per
 * hash); they are stored in each hash so they can be raised later and old hashes still verify.
 */
const PARAMS = { N: 2 ** 15, r: 8, p: 3 };
const KEYLEN = 32;

function derive(password: string, salt: Buffer, p: typeof PARAMS): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, KEYLEN, { ...p, maxmem: 256 * p.N * p.r * 2 }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, PARAMS);
  return `scrypt$${PARAMS.N}$${PARAMS.r}$${PARAMS.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const key = await derive(password, Buffer.from(salt, 'base64'), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

let dummy: Promise<string> | undefined;
/** Spends one hash on an unknown user so that its answer takes as long as a wrong password (no user probing). */
export async function burnPasswordCheck(password: string): Promise<false> {
  dummy ??= hashPassword('gatehouse-dummy-password');
  await verifyPassword(password, await dummy);
  return false;
}

/** Constant-time comparison of two secrets given as strings. */
export function secretsEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
