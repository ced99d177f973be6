import { createPublicKey } from 'node:crypto';
import type { Duplex } from 'node:stream';
import ssh2, {
  type Algorithms,
  type BaseAgent,
  type PasswordAuthMethod,
  type PublicKeyAuthMethod,
} from 'ssh2';

/**
 * Between the gateway and the agent both ends are ssh2 over an already authenticated tunnel stream, so pick what
 * is fastest in Node: AES-GCM runs in OpenSSL and costs far less than chacha20 in JavaScript.
 */
const upstreamAlgorithms: Algorithms = {
  kex: ['curve25519-sha256', 'curve25519-sha256@libssh.org', 'ecdh-sha2-nistp256'],
  cipher: ['aes128-gcm@openssh.com', 'aes256-gcm@openssh.com', 'chacha20-poly1305@openssh.com'],
  serverHostKey: ['ssh-ed25519', 'ecdsa-sha2-nistp256', 'rsa-sha2-256', 'rsa-sha2-512'],
  hmac: ['hmac-sha2-256-etm@openssh.com', 'hmac-sha2-256'],
  compress: ['none'],
};

export type UpstreamAuth = { password: string } | { privateKey: string };

export class UpstreamRefused extends Error {
  override name = 'UpstreamRefused';
}

/** The agent at the end of the tunnel showed a host key other than the device's registered key. */
export class HostKeyMismatch extends Error {
  override name = 'HostKeyMismatch';
}

/**
 * Whether the SSH host key an agent offers (the SSH wire blob) is the device key on record (PEM). Compared as SPKI
 * DER, so the encodings of the two do not matter; anything unreadable is a mismatch.
 */
export function isDeviceKey(offered: Buffer, registeredPem: string): boolean {
  try {
    const parsed = ssh2.utils.parseKey(offered);
    const key = Array.isArray(parsed) ? parsed[0] : parsed;
    if (!key || key instanceof Error) return false;
    const der = (pem: string) => createPublicKey(pem).export({ type: 'spki', format: 'der' });
    return der(key.getPublicPEM()).equals(der(registeredPem));
  } catch {
    return false;
  }
}

/**
 * Signs in to the device's agent over `stream` as `username`. Resolves with the ready client, or rejects with
 * UpstreamRefused when the agent said no to the credentials (and with the transport error otherwise).
 */
export function connectUpstream(
  stream: Duplex,
  opts: { username: string; auth: UpstreamAuth; agent?: BaseAgent; timeoutMs: number; hostKey: string },
): Promise<ssh2.Client> {
  return new Promise((resolve, reject) => {
    const client = new ssh2.Client();
    const method: PasswordAuthMethod | PublicKeyAuthMethod =
      'password' in opts.auth
        ? { type: 'password', username: opts.username, password: opts.auth.password }
        : { type: 'publickey', username: opts.username, key: opts.auth.privateKey };
    let settled = false;
    let mismatch = false;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      client.end();
      stream.destroy();
      reject(err);
    };
    client.once('ready', () => {
      settled = true;
      resolve(client);
    });
    // Errors after sign-in surface as 'close' to whoever holds the client.
    client.on('error', (err: Error & { level?: string }) => {
      if (mismatch) return fail(new HostKeyMismatch('the agent showed a host key other than the device key'));
      fail(
        err.level === 'client-authentication' ? new UpstreamRefused('the device refused the sign-in') : err,
      );
    });
    client.once('close', () => fail(new Error('the device closed the connection during sign-in')));
    client.connect({
      sock: stream as unknown as ssh2.ConnectConfig['sock'],
      username: opts.username,
      // Exactly the one method chosen: ssh2 would otherwise also try the agent relay's identities.
      authHandler: [method],
      ...(opts.agent ? { agent: opts.agent } : {}),
      algorithms: upstreamAlgorithms,
      readyTimeout: opts.timeoutMs,
      keepaliveInterval: 15_000,
      keepaliveCountMax: 4,
      // The agent's host key is its device key: anything else is not the device, and it gets no credential (the
      // password or key sign-in is sent only after this check).
      hostVerifier: (key: Buffer) => {
        mismatch = !isDeviceKey(key, opts.hostKey);
        return !mismatch;
      },
    });
  });
}
