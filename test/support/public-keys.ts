import { generateKeyPairSync } from 'node:crypto';

/**
 * The `data` of a public key as the public-key calls take it: base64 of an authorized_keys line, for a new Ed25519
 * key. Made with node's crypto: ssh2's key generator drops a leading zero byte of the public key now and then
 * (about one key in 250), giving a 31-byte key the server rightly refuses with 422.
 */
export function publicKeyData(comment = 'test'): string {
  const { publicKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x as string, 'base64url');
  const field = (bytes: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(bytes.length);
    return Buffer.concat([length, bytes]);
  };
  const blob = Buffer.concat([field(Buffer.from('ssh-ed25519')), field(raw)]);
  return Buffer.from(`ssh-ed25519 ${blob.toString('base64')} ${comment}`).toString('base64');
}
