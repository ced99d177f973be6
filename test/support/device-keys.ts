import { generateKeyPairSync } from 'node:crypto';
import { type ProofSubject, proofHeaders } from '@gatehouse/protocol/agent-proof';

/** A device key pair as an agent keeps it: PEM private key, SPKI PEM public key. */
export interface DeviceKeyPair {
  privateKey: string;
  publicKey: string;
}

const made = new Map<string, DeviceKeyPair>();

/**
 * A device key for `label`, the same one each time in a test run (a device keeps its key). Ed25519: quick to make
 * and accepted by the server like the RSA keys the agent creates.
 */
export function deviceKey(label: string): DeviceKeyPair {
  let pair = made.get(label);
  if (!pair) {
    pair = generateKeyPairSync('ed25519', {
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    made.set(label, pair);
  }
  return pair;
}

/** The body fields a proof of a registration covers. */
export interface RegistrationFields {
  tenant_id: string;
  identity: { mac: string };
  public_key: string;
  hostname: string;
}

/** The agent protocol 2 headers of `POST /api/devices/auth` for `body`, signed with `privateKey`. */
export function registrationHeaders(body: RegistrationFields, privateKey: string): Record<string, string> {
  const subject: ProofSubject = {
    purpose: 'register',
    tenantId: body.tenant_id,
    mac: body.identity.mac,
    publicKey: body.public_key,
    hostname: body.hostname,
  };
  return proofHeaders(subject, privateKey);
}

/** The agent protocol 2 headers of an `/agent/connection` upgrade of device `uid`. */
export function tunnelHeaders(uid: string, privateKey: string): Record<string, string> {
  return proofHeaders({ purpose: 'tunnel', uid }, privateKey);
}

/**
 * A `POST /api/devices/auth` request as a real agent (protocol 2) makes it: the body, and the proof headers signed
 * with the key of `keyLabel` (the key is the device: the same label is the same device).
 */
export function agentAuthRequest(opts: {
  tenant: string;
  hostname: string;
  mac: string;
  keyLabel: string;
  platform?: 'native' | 'docker';
  version?: string;
  /** The operating system the agent reports (info.id, info.pretty_name); Debian 12 unless given. */
  os?: { id: string; pretty_name: string };
}): { body: RegistrationFields & Record<string, unknown>; headers: Record<string, string> } {
  return keyedAuthRequest({ ...opts, key: deviceKey(opts.keyLabel) });
}

/** An RSA device key as the agent makes one (PKCS#1 PEM private key, SPKI PEM public key), which ssh2 serves. */
export function rsaDeviceKey(): DeviceKeyPair {
  return generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
}

/**
 * A `POST /api/devices/auth` request of a device with the key pair `key`, as an agent of `version` makes it: the
 * body, and the proof headers signed with that key. For tests that play the device themselves.
 */
export function keyedAuthRequest(opts: {
  tenant: string;
  hostname: string;
  mac: string;
  key: DeviceKeyPair;
  platform?: 'native' | 'docker';
  version?: string;
  os?: { id: string; pretty_name: string };
}): { body: RegistrationFields & Record<string, unknown>; headers: Record<string, string> } {
  const body = {
    info: {
      id: opts.os?.id ?? 'debian',
      pretty_name: opts.os?.pretty_name ?? 'Debian GNU/Linux 12',
      version: opts.version ?? '0.2.0',
      arch: 'amd64',
      platform: opts.platform ?? 'native',
    },
    sessions: [],
    hostname: opts.hostname,
    identity: { mac: opts.mac },
    public_key: opts.key.publicKey,
    tenant_id: opts.tenant,
  };
  return { body, headers: registrationHeaders(body, opts.key.privateKey) };
}
