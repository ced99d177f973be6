import { createHash } from 'node:crypto';
import { type Cache, Forbidden, type InstanceKeys, NotFound } from '@gatehouse/core';
import ssh2 from 'ssh2';
import { md5Fingerprint } from './fingerprint';

/**
 * Seconds a sign-in the gateway signed stays open to its device's `POST /api/auth/ssh`: the gateway gives up on a
 * sign-in after 20 s, and the agent asks at once.
 */
const SIGN_IN_SECONDS = 30;

/** The cache entry of one blob the gateway signed to sign in to one device. */
const signInKey = (deviceUid: string, blob: Buffer) =>
  `gateway-sign-in:${deviceUid}:${createHash('sha256').update(blob).digest('hex')}`;

/**
 * The gateway key, for signing in to agents that check it through `POST /api/auth/ssh`: the gateway signs in to an
 * agent with its own Ed25519 key, and the agent asks the server to sign the same blob; Ed25519 signatures are
 * deterministic, so the agent compares the two and knows the client held the gateway key, without any private key
 * leaving the server.
 *
 * A signature of the gateway key is good for signing in to any agent, so the server signs nothing but what the
 * gateway itself signed to sign in to the device that asks: each blob the gateway signs is recorded first, under
 * that device and for SIGN_IN_SECONDS, in the cache the instances share (the agent's call may reach any of them),
 * and the call answers only a blob recorded for its caller, once. The blob begins with the session id of the SSH
 * connection the gateway opened to that device, so no device can obtain a signature another device would take, or
 * one over anything else.
 */
export class GatewaySigner {
  private readonly key: ssh2.ParsedKey;
  private readonly cache: Cache;
  readonly fingerprint: string;

  constructor(deps: { keys: InstanceKeys; cache: Cache }) {
    const parsed = ssh2.utils.parseKey(deps.keys.gatewayKey);
    const key = Array.isArray(parsed) ? parsed[0] : parsed;
    if (!key || key instanceof Error) throw new Error('the stored gateway key does not parse');
    this.key = key;
    this.cache = deps.cache;
    this.fingerprint = md5Fingerprint(key.getPublicSSH());
  }

  /**
   * What the gateway's ssh2 client signs in to the device with (an authentication of type `agent`): the gateway
   * key, which records each blob for the device before it signs it.
   */
  agentFor(deviceUid: string): ssh2.BaseAgent {
    return new GatewayKeyAgent(this.key, (blob) =>
      this.cache.set(signInKey(deviceUid, blob), '1', SIGN_IN_SECONDS),
    );
  }

  /**
   * `POST /api/auth/ssh` for the device `deviceUid`: the signature of a blob the gateway signed to sign in to that
   * device, once. 404 for a key that is not the gateway key, 403 for anything else.
   */
  async sign(deviceUid: string, fingerprint: string, data: string): Promise<{ signature: string }> {
    if (fingerprint !== this.fingerprint) throw new NotFound('public key');
    const blob = Buffer.from(data, 'base64');
    // A userauth blob starts with the 32-byte session id as an SSH string and then SSH_MSG_USERAUTH_REQUEST (50).
    if (blob.length < 4 + 32 + 1 || blob.readUInt32BE(0) !== 32 || blob[36] !== 50)
      throw new Forbidden('not a sign-in blob');
    if (!(await this.cache.take(signInKey(deviceUid, blob))))
      throw new Forbidden('not a sign-in of the gateway to this device');
    const signature = this.key.sign(blob);
    if (signature instanceof Error) throw signature;
    return { signature: signature.toString('base64') };
  }
}

/** An ssh2 agent with the one gateway key, whose signing is preceded by `record` (a failed record signs nothing). */
class GatewayKeyAgent extends ssh2.BaseAgent {
  constructor(
    private readonly key: ssh2.ParsedKey,
    private readonly record: (blob: Buffer) => Promise<unknown>,
  ) {
    super();
  }

  override getIdentities(cb: (err: Error | undefined, keys?: Buffer[]) => void): void {
    cb(undefined, [this.key.getPublicSSH()]);
  }

  override sign(
    _key: unknown,
    data: Buffer,
    opts: ssh2.SigningRequestOptions | ((err: Error | undefined, signature?: Buffer) => void),
    cb?: (err: Error | undefined, signature?: Buffer) => void,
  ): void {
    const done = typeof opts === 'function' ? opts : cb;
    const hash = typeof opts === 'function' ? undefined : opts?.hash;
    this.record(data).then(
      () => {
        const signature = this.key.sign(data, hash);
        done?.(
          signature instanceof Error ? signature : undefined,
          signature instanceof Error ? undefined : signature,
        );
      },
      (err: Error) => done?.(err),
    );
  }
}
