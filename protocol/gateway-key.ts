import { createHash, timingSafeEqual } from 'node:crypto';

/** Body of `POST /api/auth/ssh`. */
export interface GatewaySignRequest {
  /** MD5 fingerprint of the offered public key, hex pairs joined by colons. */
  fingerprint: string;
  /** Base64 of the exact blob the client signed (session id + userauth request). */
  data: string;
}

/** Calls `POST {server}/api/auth/ssh` with the device token and answers its JSON. */
export type GatewaySigner = (request: GatewaySignRequest) => Promise<{ signature: string }>;

/** What ssh2 tells us of a public-key sign-in that carries a signature. */
export interface OfferedSignature {
  key: { algo: string; data: Buffer };
  blob: Buffer;
  signature: Buffer;
}

export function md5Fingerprint(publicKeyBlob: Buffer): string {
  const hex = createHash('md5').update(publicKeyBlob).digest('hex');
  return hex.match(/../g)!.join(':');
}

/**
 * Accepts a public-key sign-in from the gateway: the server signs the same blob with
 * its gateway key. Ed25519 signatures are deterministic, so an equal signature proves
 * the client holds that key. Any failure (network, refusal, malformed answer) is a no.
 */
export async function verifyGatewaySignature(offer: OfferedSignature, sign: GatewaySigner): Promise<boolean> {
  if (offer.key.algo !== 'ssh-ed25519') return false;
  let answer: { signature: string };
  try {
    answer = await sign({ fingerprint: md5Fingerprint(offer.key.data), data: offer.blob.toString('base64') });
  } catch {
    return false;
  }
  if (typeof answer?.signature !== 'string') return false;
  const expected = Buffer.from(answer.signature, 'base64');
  return expected.length === offer.signature.length && timingSafeEqual(expected, offer.signature);
}
