import { Forbidden, type InstanceKeys, NotFound } from '@gatehouse/core';
import ssh2 from 'ssh2';
import { md5Fingerprint } from './fingerprint';

/**
 * Answers agents' `POST /api/auth/ssh`: the gateway signs in to an agent with its own Ed25519 key, and the agent
 * asks the server to sign the same blob. Ed25519 signatures are deterministic, so the agent compares the two and
 * knows the client held the gateway key, without any private key leaving the server.
 */
export class GatewaySigner {
  private readonly key: ssh2.ParsedKey;
  readonly fingerprint: string;
  /** The OpenSSH private key the gateway's ssh2 client signs in with (ssh2 cannot read back its PEM export). */
  readonly privateKey: string;

  constructor(deps: { keys: InstanceKeys }) {
    const parsed = ssh2.utils.parseKey(deps.keys.gatewayKey);
    const key = Array.isArray(parsed) ? parsed[0] : parsed;
    if (!key || key instanceof Error) throw new Error('the stored gateway key does not parse');
    this.key = key;
    this.privateKey = deps.keys.gatewayKey;
    this.fingerprint = md5Fingerprint(key.getPublicSSH());
  }

  sign(fingerprint: string, data: string): { signature: string } {
    if (fingerprint !== this.fingerprint) throw new NotFound('public key');
    const blob = Buffer.from(data, 'base64');
    // A userauth blob starts with the 32-byte session id as an SSH string and then SSH_MSG_USERAUTH_REQUEST (50).
    if (blob.length < 4 + 32 + 1 || blob.readUInt32BE(0) !== 32 || blob[36] !== 50)
      throw new Forbidden('not a sign-in blob');
    const signature = this.key.sign(blob);
    if (signature instanceof Error) throw signature;
    return { signature: signature.toString('base64') };
  }
}
