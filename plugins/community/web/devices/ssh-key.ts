import bcrypt from 'bcrypt-pbkdf';
import { sha256Fingerprint } from '../access/fingerprint';

// Private keys for the web terminal, read and used inside the browser only. The file is parsed here, the key is
// imported into WebCrypto as non-extractable, and all the gateway ever receives is the public key and one
// signature over its one-time challenge (see plugins/community/gateway/key-proof.ts for the other end).
//
// The signature is an SSHSIG signature (the format of `ssh-keygen -Y sign`) in the namespace below, so it means
// "sign in to the Gatehouse web terminal" and nothing else: it is no SSH user-authentication signature and no
// signature of a file, and the browser builds the signed bytes itself from the server's nonce, so the gateway
// cannot make it sign anything else.

export const SIGNATURE_NAMESPACE = 'gatehouse-web-terminal';

export class KeyError extends Error {
  override name = 'KeyError';
}

/** A private key ready to sign, with what a person needs to recognise it. */
export interface LoadedKey {
  /** The OpenSSH public key line (`ssh-ed25519 AAAA... comment`). */
  publicKey: string;
  /** As `ssh-keygen -l` prints it: `SHA256:...`. */
  fingerprint: string;
  type: string;
  comment: string;
  /** An SSH signature blob (string algorithm, string signature) over `data`. */
  sign(data: Uint8Array): Promise<Uint8Array>;
}

/** What can be told of a key file before its passphrase is known. */
export interface KeyFile {
  encrypted: boolean;
  type: string;
  fingerprint: string;
  text: string;
}

// ---- SSH wire format ----

const utf8 = new TextEncoder();

class Reader {
  private at = 0;
  constructor(private readonly buf: Uint8Array) {}
  u32(): number {
    if (this.at + 4 > this.buf.length) throw new KeyError('The key file is cut short.');
    const v = new DataView(this.buf.buffer, this.buf.byteOffset + this.at, 4).getUint32(0);
    this.at += 4;
    return v;
  }
  bytes(n: number): Uint8Array {
    if (this.at + n > this.buf.length) throw new KeyError('The key file is cut short.');
    const v = this.buf.subarray(this.at, this.at + n);
    this.at += n;
    return v;
  }
  string(): Uint8Array {
    return this.bytes(this.u32());
  }
  text(): string {
    return new TextDecoder().decode(this.string());
  }
  /** An mpint as unsigned big-endian bytes without leading zeros. */
  mpint(): Uint8Array {
    return stripZeros(this.string());
  }
  rest(): Uint8Array {
    return this.buf.subarray(this.at);
  }
}

function stripZeros(b: Uint8Array): Uint8Array {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  return b.subarray(i);
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function u32(n: number): Uint8Array {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, n);
  return b;
}

export function sshString(value: Uint8Array | string): Uint8Array {
  const bytes = typeof value === 'string' ? utf8.encode(value) : value;
  return concat(u32(bytes.length), bytes);
}

function mpint(unsigned: Uint8Array): Uint8Array {
  const v = stripZeros(unsigned);
  if (v.length === 1 && v[0] === 0) return sshString(new Uint8Array(0));
  return sshString((v[0] ?? 0) & 0x80 ? concat(new Uint8Array([0]), v) : v);
}

function base64(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

function base64url(bytes: Uint8Array): string {
  return base64(bytes).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function unbase64(text: string): Uint8Array {
  const bin = atob(text.replace(/\s+/g, ''));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function leftPad(b: Uint8Array, size: number): Uint8Array {
  if (b.length >= size) return b.subarray(b.length - size);
  const out = new Uint8Array(size);
  out.set(b, size - b.length);
  return out;
}

async function digest(name: 'SHA-256' | 'SHA-512', data: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest(name, data as BufferSource));
}

// ---- The key file ----

const PEM = /-----BEGIN OPENSSH PRIVATE KEY-----([\s\S]+?)-----END OPENSSH PRIVATE KEY-----/;
const MAGIC = 'openssh-key-v1\0';
const CIPHERS: Record<string, { keyLength: number; ivLength: number }> = {
  'aes256-ctr': { keyLength: 32, ivLength: 16 },
  'aes128-ctr': { keyLength: 16, ivLength: 16 },
};

interface Container {
  cipher: string;
  kdf: { salt: Uint8Array; rounds: number } | undefined;
  publicBlob: Uint8Array;
  sealed: Uint8Array;
}

function readContainer(text: string): Container {
  const match = PEM.exec(text);
  if (!match?.[1]) {
    if (/^\s*(ssh-|ecdsa-)/.test(text))
      throw new KeyError('This is a public key. Choose the private key file (the one without .pub).');
    if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text))
      throw new KeyError(
        'This key is in PEM format. The terminal reads OpenSSH private keys: run ssh-keygen -p -f <file> to rewrite it in that format.',
      );
    if (text.startsWith('PuTTY-User-Key-File'))
      throw new KeyError('This is a PuTTY key. Export it from PuTTYgen as an OpenSSH key first.');
    throw new KeyError(
      'This is not an OpenSSH private key (it should start with BEGIN OPENSSH PRIVATE KEY).',
    );
  }
  let raw: Uint8Array;
  try {
    raw = unbase64(match[1]);
  } catch {
    throw new KeyError('The key file is damaged (its base64 does not decode).');
  }
  if (new TextDecoder().decode(raw.subarray(0, MAGIC.length)) !== MAGIC)
    throw new KeyError('This is not an OpenSSH private key.');
  const r = new Reader(raw.subarray(MAGIC.length));
  const cipher = r.text();
  const kdfName = r.text();
  const kdfOptions = new Reader(r.string());
  if (r.u32() !== 1) throw new KeyError('The key file holds more than one key.');
  const publicBlob = r.string();
  const sealed = r.string();
  let kdf: Container['kdf'];
  if (cipher !== 'none') {
    if (!CIPHERS[cipher])
      throw new KeyError(
        `The key is encrypted with ${cipher}, which the terminal cannot read; use aes256-ctr.`,
      );
    if (kdfName !== 'bcrypt') throw new KeyError(`The key uses the ${kdfName} key derivation, not bcrypt.`);
    kdf = { salt: kdfOptions.string(), rounds: kdfOptions.u32() };
  }
  return { cipher, kdf, publicBlob, sealed };
}

/** Reads a key file far enough to say what it is and whether it needs a passphrase. */
export async function inspectKeyFile(text: string): Promise<KeyFile> {
  const c = readContainer(text);
  return {
    encrypted: c.cipher !== 'none',
    type: new Reader(c.publicBlob).text(),
    fingerprint: await sha256Fingerprint(c.publicBlob),
    text,
  };
}

async function unseal(c: Container, passphrase: string): Promise<Uint8Array> {
  const cipher = CIPHERS[c.cipher];
  if (!cipher || !c.kdf) return c.sealed;
  if (!passphrase) throw new KeyError('This key is protected by a passphrase; type it to use the key.');
  const pass = utf8.encode(passphrase);
  const derived = new Uint8Array(cipher.keyLength + cipher.ivLength);
  if (
    bcrypt.pbkdf(pass, pass.length, c.kdf.salt, c.kdf.salt.length, derived, derived.length, c.kdf.rounds) !==
    0
  )
    throw new KeyError('The key derivation failed.');
  const key = await crypto.subtle.importKey(
    'raw',
    derived.subarray(0, cipher.keyLength) as BufferSource,
    'AES-CTR',
    false,
    ['decrypt'],
  );
  const plain = await crypto.subtle.decrypt(
    { name: 'AES-CTR', counter: derived.subarray(cipher.keyLength) as BufferSource, length: 128 },
    key,
    c.sealed as BufferSource,
  );
  return new Uint8Array(plain);
}

const CURVES: Record<string, { crv: string; hash: string; size: number }> = {
  nistp256: { crv: 'P-256', hash: 'SHA-256', size: 32 },
  nistp384: { crv: 'P-384', hash: 'SHA-384', size: 48 },
  nistp521: { crv: 'P-521', hash: 'SHA-512', size: 66 },
};

function bigOf(b: Uint8Array): bigint {
  let n = 0n;
  for (const x of b) n = (n << 8n) | BigInt(x);
  return n;
}

function bytesOf(n: bigint): Uint8Array {
  const hex = n.toString(16);
  const padded = hex.length % 2 ? `0${hex}` : hex;
  const out = new Uint8Array(padded.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(padded.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/**
 * Opens an OpenSSH private key (Ed25519, ECDSA or RSA; unencrypted or encrypted with the bcrypt KDF and AES-CTR,
 * as `ssh-keygen` writes them) and imports it into WebCrypto, where it cannot be read back out.
 */
export async function loadPrivateKey(text: string, passphrase = ''): Promise<LoadedKey> {
  const c = readContainer(text);
  const r = new Reader(await unseal(c, passphrase));
  // Two copies of one random check word: they differ when the passphrase (so the decryption) was wrong.
  const check = r.u32();
  if (r.u32() !== check)
    throw new KeyError(c.kdf ? 'Wrong passphrase for this key.' : 'The key file is damaged.');
  const type = r.text();
  let sign: (data: Uint8Array) => Promise<Uint8Array>;
  if (type === 'ssh-ed25519') {
    const pub = r.string();
    const priv = r.string();
    const key = await crypto.subtle.importKey(
      'jwk',
      { kty: 'OKP', crv: 'Ed25519', x: base64url(pub), d: base64url(priv.subarray(0, 32)) },
      { name: 'Ed25519' },
      false,
      ['sign'],
    );
    sign = async (data) =>
      concat(
        sshString(type),
        sshString(new Uint8Array(await crypto.subtle.sign('Ed25519', key, data as BufferSource))),
      );
  } else if (type.startsWith('ecdsa-sha2-')) {
    const curve = CURVES[r.text()];
    if (!curve) throw new KeyError(`The curve of this ${type} key is not supported.`);
    const q = r.string();
    const d = r.mpint();
    const x = q.subarray(1, 1 + curve.size);
    const y = q.subarray(1 + curve.size);
    const key = await crypto.subtle.importKey(
      'jwk',
      {
        kty: 'EC',
        crv: curve.crv,
        x: base64url(x),
        y: base64url(y),
        d: base64url(leftPad(d, curve.size)),
      },
      { name: 'ECDSA', namedCurve: curve.crv },
      false,
      ['sign'],
    );
    sign = async (data) => {
      const raw = new Uint8Array(
        await crypto.subtle.sign({ name: 'ECDSA', hash: curve.hash }, key, data as BufferSource),
      );
      const rs = concat(mpint(raw.subarray(0, curve.size)), mpint(raw.subarray(curve.size)));
      return concat(sshString(type), sshString(rs));
    };
  } else if (type === 'ssh-rsa') {
    const [n, e, dd, iqmp, p, q] = [r.mpint(), r.mpint(), r.mpint(), r.mpint(), r.mpint(), r.mpint()];
    const big = { d: bigOf(dd), p: bigOf(p), q: bigOf(q) };
    const key = await crypto.subtle.importKey(
      'jwk',
      {
        kty: 'RSA',
        n: base64url(n),
        e: base64url(e),
        d: base64url(dd),
        p: base64url(p),
        q: base64url(q),
        dp: base64url(bytesOf(big.d % (big.p - 1n))),
        dq: base64url(bytesOf(big.d % (big.q - 1n))),
        qi: base64url(iqmp),
      },
      { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-512' },
      false,
      ['sign'],
    );
    sign = async (data) =>
      concat(
        sshString('rsa-sha2-512'),
        sshString(new Uint8Array(await crypto.subtle.sign('RSASSA-PKCS1-v1_5', key, data as BufferSource))),
      );
  } else {
    throw new KeyError(`${type} keys are not supported; use an Ed25519, ECDSA or RSA key.`);
  }
  const comment = r.text();
  return {
    publicKey: `${new Reader(c.publicBlob).text()} ${base64(c.publicBlob)}${comment ? ` ${comment}` : ''}`,
    fingerprint: await sha256Fingerprint(c.publicBlob),
    type,
    comment,
    sign,
  };
}

/**
 * The bytes an SSHSIG signature covers (OpenSSH's PROTOCOL.sshsig): the magic, the namespace, an empty reserved
 * field, the hash algorithm and the hash of the message. Here the message is the gateway's one-time nonce.
 */
export async function signedData(nonce: Uint8Array, namespace = SIGNATURE_NAMESPACE): Promise<Uint8Array> {
  return concat(
    utf8.encode('SSHSIG'),
    sshString(namespace),
    sshString(''),
    sshString('sha512'),
    sshString(await digest('SHA-512', nonce)),
  );
}

/** Answers the gateway's challenge: the SSH signature blob, base64, over the SSHSIG data of the nonce. */
export async function answerChallenge(key: LoadedKey, nonceBase64: string): Promise<string> {
  const nonce = unbase64(nonceBase64);
  if (nonce.length < 16 || nonce.length > 64) throw new KeyError('The gateway sent a malformed challenge.');
  return base64(await key.sign(await signedData(nonce)));
}
