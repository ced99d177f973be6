import { createHash, createPublicKey, randomBytes, verify } from 'node:crypto';
import ssh2 from 'ssh2';

/**
 * Proof that the web terminal's browser holds a private key, without the key leaving the browser. The gateway
 * sends a random nonce; the browser signs it as an SSHSIG signature (OpenSSH's PROTOCOL.sshsig, what
 * `ssh-keygen -Y sign -n <namespace>` makes) in the namespace below and sends back only the signature. The namespace
 * binds the signature to this one purpose: it cannot stand in for an SSH user-authentication signature or a
 * signature over anything else, and the browser builds the signed bytes itself (plugins/community/web/devices/
 * ssh-key.ts), so the gateway cannot have it sign other data. A fresh nonce per sign-in stops replays.
 */
export const SIGNATURE_NAMESPACE = 'gatehouse-web-terminal';

export function newNonce(): Buffer {
  return randomBytes(32);
}

function sshString(value: Buffer | string): Buffer {
  const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
  const len = Buffer.alloc(4);
  len.writeUInt32BE(bytes.length);
  return Buffer.concat([len, bytes]);
}

/** The bytes an SSHSIG signature over `message` covers (hash sha512). */
export function signedData(message: Buffer, namespace = SIGNATURE_NAMESPACE): Buffer {
  return Buffer.concat([
    Buffer.from('SSHSIG'),
    sshString(namespace),
    sshString(''),
    sshString('sha512'),
    sshString(createHash('sha512').update(message).digest()),
  ]);
}

function readStrings(buf: Buffer, count: number): Buffer[] | undefined {
  const out: Buffer[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    if (at + 4 > buf.length) return undefined;
    const len = buf.readUInt32BE(at);
    if (at + 4 + len > buf.length) return undefined;
    out.push(buf.subarray(at + 4, at + 4 + len));
    at += 4 + len;
  }
  return at === buf.length ? out : undefined;
}

/** An SSH ECDSA signature (mpint r, mpint s) as IEEE P1363 (r and s, each `size` bytes). */
function ecdsaP1363(sig: Buffer, size: number): Buffer | undefined {
  const parts = readStrings(sig, 2);
  if (!parts) return undefined;
  const fixed = parts.map((p) => {
    let v = p;
    while (v.length > size && v[0] === 0) v = v.subarray(1);
    if (v.length > size) return undefined;
    return Buffer.concat([Buffer.alloc(size - v.length), v]);
  });
  if (fixed.some((f) => !f)) return undefined;
  return Buffer.concat(fixed as Buffer[]);
}

const ECDSA: Record<string, { hash: string; size: number }> = {
  'ecdsa-sha2-nistp256': { hash: 'sha256', size: 32 },
  'ecdsa-sha2-nistp384': { hash: 'sha384', size: 48 },
  'ecdsa-sha2-nistp521': { hash: 'sha512', size: 66 },
};

/** A public key as the browser offers it: an OpenSSH public key line. */
export interface OfferedKey {
  type: string;
  /** The SSH wire blob (what fingerprints hash). */
  blob: Buffer;
  pem: string;
}

export function parseOfferedKey(line: string): OfferedKey | undefined {
  if (typeof line !== 'string' || line.length > 16_384 || line.includes('PRIVATE')) return undefined;
  const parsed = ssh2.utils.parseKey(line.trim());
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  if (!key || key instanceof Error || key.isPrivateKey()) return undefined;
  return { type: key.type, blob: key.getPublicSSH(), pem: key.getPublicPEM() };
}

/**
 * Checks a signature blob (string algorithm, string signature, base64) over the SSHSIG data of `nonce` against the
 * offered key. RSA must sign with SHA-2 (rsa-sha2-256 or rsa-sha2-512); the algorithm must fit the key.
 */
export function verifyProof(key: OfferedKey, nonce: Buffer, signatureBase64: string): boolean {
  if (typeof signatureBase64 !== 'string' || signatureBase64.length > 4096) return false;
  const parts = readStrings(Buffer.from(signatureBase64, 'base64'), 2);
  if (!parts) return false;
  const [algBytes, sig] = parts as [Buffer, Buffer];
  const alg = algBytes.toString('utf8');
  const data = signedData(nonce);
  const publicKey = createPublicKey(key.pem);
  try {
    if (key.type === 'ssh-ed25519' && alg === 'ssh-ed25519') return verify(null, data, publicKey, sig);
    if (key.type === 'ssh-rsa' && (alg === 'rsa-sha2-512' || alg === 'rsa-sha2-256'))
      return verify(alg === 'rsa-sha2-512' ? 'sha512' : 'sha256', data, publicKey, sig);
    const ec = ECDSA[key.type];
    if (ec && alg === key.type) {
      const p1363 = ecdsaP1363(sig, ec.size);
      return p1363 ? verify(ec.hash, data, { key: publicKey, dsaEncoding: 'ieee-p1363' }, p1363) : false;
    }
  } catch {
    return false;
  }
  return false;
}
