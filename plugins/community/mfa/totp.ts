import { createHmac, randomBytes } from 'node:crypto';
import { secretsEqual } from '@gatehouse/core';

/**
 * TOTP as RFC 6238 defines it with the parameters every authenticator app assumes when the otpauth link names
 * none: HMAC-SHA1, 6 digits, 30-second steps, a base32 secret.
 */
export const TOTP = { digits: 6, period: 30, algorithm: 'SHA1' } as const;

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export function base32Encode(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

export function base32Decode(text: string): Buffer {
  const clean = text.toUpperCase().replace(/=+$/, '');
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const ch of clean) {
    const idx = ALPHABET.indexOf(ch);
    if (idx < 0) throw new Error('not base32');
    value = (value << 5) | idx;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** A new 160-bit secret (RFC 4226 recommends the HMAC-SHA1 output length). */
export function newTotpSecret(): string {
  return base32Encode(randomBytes(20));
}

/** The HOTP value (RFC 4226) of `key` at `counter`. */
export function hotp(key: Buffer, counter: number, digits: number = TOTP.digits): string {
  const msg = Buffer.alloc(8);
  msg.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac('sha1', key).update(msg).digest();
  const offset = (mac[mac.length - 1] as number) & 0x0f;
  const code = (mac.readUInt32BE(offset) & 0x7fffffff) % 10 ** digits;
  return String(code).padStart(digits, '0');
}

/** The time step of `unixSeconds`. */
export function totpStep(unixSeconds: number = Date.now() / 1000): number {
  return Math.floor(unixSeconds / TOTP.period);
}

export function totpCode(secret: string, unixSeconds: number = Date.now() / 1000): string {
  return hotp(base32Decode(secret), totpStep(unixSeconds));
}

/**
 * The time step `code` matches, allowing one step of clock drift either way (RFC 6238 section 5.2), or undefined.
 * Every candidate is compared in constant time.
 */
export function matchTotp(
  secret: string,
  code: string,
  unixSeconds: number = Date.now() / 1000,
): number | undefined {
  const key = base32Decode(secret);
  const now = totpStep(unixSeconds);
  let found: number | undefined;
  for (const step of [now - 1, now, now + 1]) {
    if (secretsEqual(hotp(key, step), code) && found === undefined) found = step;
  }
  return found;
}

/** The provisioning link authenticator apps read from a QR code. */
export function otpauthLink(secret: string, account: string, issuer = 'Gatehouse'): string {
  const label = encodeURIComponent(`${issuer}:${account}`);
  const q = new URLSearchParams({
    secret,
    issuer,
    algorithm: TOTP.algorithm,
    digits: String(TOTP.digits),
    period: String(TOTP.period),
  });
  return `otpauth://totp/${label}?${q.toString()}`;
}
