import { createPublicKey, type KeyObject } from 'node:crypto';

/**
 * Reading a device's PEM public key (`-----BEGIN PUBLIC KEY-----`, SubjectPublicKeyInfo) into a KeyObject.
 *
 * OpenSSL 3 reads such a PEM by trying its decoders one after another: 0.12 ms for an Ed25519 key and 0.17 ms for an
 * RSA-2048 key on the machine of bench/RESULTS.md, where the same key given as a JWK takes 0.01 ms. A restarted
 * server reads every agent's key once, on its first availability call. So the two layouts agents send (RSA, as the
 * agent makes its key, and Ed25519) are taken apart here, strictly, and handed to OpenSSL as a JWK. Anything else,
 * and anything that is not exactly one of those two layouts, goes to OpenSSL's own reader, so what is accepted and
 * refused is what `createPublicKey(pem)` accepts and refuses.
 */
export function readPublicKey(pem: string): KeyObject {
  const jwk = quickJwk(pem);
  return (jwk && fromJwk(jwk)) ?? createPublicKey(pem);
}

type Jwk = { kty: 'RSA'; n: string; e: string } | { kty: 'OKP'; crv: 'Ed25519'; x: string };

/**
 * A PEM public key as OpenSSL and the agent write it: base64 in lines of up to 76 characters, the last one padded.
 * A blank line is not base64 (OpenSSL takes one for the end of the PEM's headers and reads no key), so none may be.
 */
const PEM =
  /^-----BEGIN PUBLIC KEY-----\r?\n((?:[A-Za-z0-9+/]{1,76}\r?\n)*[A-Za-z0-9+/]{1,76}={0,2}\r?\n)-----END PUBLIC KEY-----(?:\r?\n)?$/;
/** SEQUENCE { OID 1.3.101.112 (Ed25519) }, then the BIT STRING of 33 bytes (no unused bits, 32 key bytes). */
const ED25519_HEAD = Buffer.from('302a300506032b6570032100', 'hex');
/** SEQUENCE { OID 1.2.840.113549.1.1.1 (rsaEncryption), NULL }. */
const RSA_ALGORITHM = Buffer.from('300d06092a864886f70d0101010500', 'hex');

function fromJwk(jwk: Jwk): KeyObject | undefined {
  try {
    return createPublicKey({ key: jwk, format: 'jwk' });
  } catch {
    return undefined;
  }
}

/** The key of an Ed25519 or RSA SubjectPublicKeyInfo PEM as a JWK, or undefined for any other text. */
export function quickJwk(pem: string): Jwk | undefined {
  const body = PEM.exec(pem)?.[1];
  if (body === undefined) return undefined;
  const base64 = body.replace(/\r?\n/g, '');
  if (base64.length % 4 !== 0) return undefined;
  const der = Buffer.from(base64, 'base64');
  if (der.length === ED25519_HEAD.length + 32 && der.subarray(0, ED25519_HEAD.length).equals(ED25519_HEAD)) {
    return { kty: 'OKP', crv: 'Ed25519', x: der.subarray(ED25519_HEAD.length).toString('base64url') };
  }
  return rsaJwk(der);
}

/**
 * SEQUENCE { rsaEncryption, BIT STRING { 0 unused bits, SEQUENCE { INTEGER n, INTEGER e } } }, each length exact
 * and in its shortest form, both integers positive and minimal.
 */
function rsaJwk(der: Buffer): Jwk | undefined {
  const reader = new DerReader(der);
  const spki = reader.enter(0x30);
  if (!spki || !reader.done()) return undefined;
  if (!spki.take(RSA_ALGORITHM.length)?.equals(RSA_ALGORITHM)) return undefined;
  const bits = spki.enter(0x03);
  if (!bits || !spki.done() || bits.byte() !== 0) return undefined;
  const rsa = bits.enter(0x30);
  if (!rsa || !bits.done()) return undefined;
  const n = rsa.unsigned();
  const e = rsa.unsigned();
  if (!n || !e || !rsa.done()) return undefined;
  return { kty: 'RSA', n: n.toString('base64url'), e: e.toString('base64url') };
}

/** A cursor over DER bytes that refuses anything but definite, minimally encoded lengths within its bounds. */
class DerReader {
  constructor(
    private readonly der: Buffer,
    private at = 0,
    private readonly end = der.length,
  ) {}

  done(): boolean {
    return this.at === this.end;
  }

  byte(): number | undefined {
    return this.at < this.end ? this.der[this.at++] : undefined;
  }

  take(length: number): Buffer | undefined {
    if (this.end - this.at < length) return undefined;
    const bytes = this.der.subarray(this.at, this.at + length);
    this.at += length;
    return bytes;
  }

  /** The contents of the next element, which must carry `tag`, as a reader of its own. */
  enter(tag: number): DerReader | undefined {
    if (this.byte() !== tag) return undefined;
    const length = this.length();
    if (length === undefined || this.end - this.at < length) return undefined;
    const inner = new DerReader(this.der, this.at, this.at + length);
    this.at += length;
    return inner;
  }

  /** A positive INTEGER's magnitude, without its sign byte; undefined for a negative, zero or padded one. */
  unsigned(): Buffer | undefined {
    const value = this.enter(0x02);
    const bytes = value?.take(value.end - value.at);
    if (!bytes || bytes.length === 0 || (bytes[0]! & 0x80) !== 0) return undefined;
    if (bytes[0] !== 0) return bytes;
    // A leading zero is there only to keep the next byte's high bit from reading as a sign.
    return bytes.length > 1 && (bytes[1]! & 0x80) !== 0 ? bytes.subarray(1) : undefined;
  }

  private length(): number | undefined {
    const first = this.byte();
    if (first === undefined || first < 0x80) return first;
    const count = first & 0x7f;
    if (count === 0 || count > 3) return undefined;
    let length = 0;
    for (let i = 0; i < count; i++) {
      const b = this.byte();
      if (b === undefined || (i === 0 && b === 0)) return undefined;
      length = length * 256 + b;
    }
    return length < 0x80 ? undefined : length;
  }
}
