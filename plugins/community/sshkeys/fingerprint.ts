import { createHash } from 'node:crypto';
import ssh2 from 'ssh2';

export interface ParsedPublicKey {
  /** ssh key type, e.g. ssh-ed25519. */
  type: string;
  /** The SSH wire blob of the public key. */
  blob: Buffer;
  fingerprint: string;
}

/** MD5 of the key blob as colon-separated hex pairs, as `ssh-keygen -E md5 -l` prints it without the prefix. */
export function md5Fingerprint(blob: Buffer): string {
  return (createHash('md5').update(blob).digest('hex').match(/../g) ?? []).join(':');
}

/**
 * Reads the `data` of a public key: base64 of an authorized_keys line (`type base64 [comment]`). Answers
 * undefined for anything that is not a public key, so the route can say 422.
 */
export function parsePublicKeyData(data: string): ParsedPublicKey | undefined {
  if (!/^[A-Za-z0-9+/=\s]+$/.test(data)) return undefined;
  const line = Buffer.from(data, 'base64').toString('utf8').trim();
  if (!line || line.includes('PRIVATE KEY')) return undefined;
  const parsed = ssh2.utils.parseKey(line);
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  if (!key || key instanceof Error || key.isPrivateKey()) return undefined;
  const blob = key.getPublicSSH();
  return { type: key.type, blob, fingerprint: md5Fingerprint(blob) };
}
