import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
} from 'node:crypto';
import type { Knex } from 'knex';
import ssh2 from 'ssh2';
import { type SecretBox, SYSTEM_KEYS } from '../secrets';

/**
 * Keys generated on first start and kept in the store, sealed with the operator's key (core/secrets.ts), so every
 * instance sharing the database uses the same ones, a restart never regenerates them, and a dump of the store
 * alone holds none of them.
 * - `jwt`: Ed25519 key that signs user and device tokens and the setup link.
 * - `ssh-host`: the SSH gateway's host key (OpenSSH format).
 * - `gateway`: the key the gateway signs in to agents with (OpenSSH format).
 * - `secret`: 32 random bytes for HMACs (support identifiers, invite signatures).
 */
export interface InstanceKeys {
  jwtPrivate: KeyObject;
  jwtPublic: KeyObject;
  sshHostKey: string;
  gatewayKey: string;
  secret: Buffer;
}

/**
 * An Ed25519 key in OpenSSH format. ssh2's generator drops a leading zero byte of the public key about once in 256
 * keys and then cannot parse its own output, so generate until the key parses.
 */
function opensshEd25519(): string {
  for (;;) {
    const key = ssh2.utils.generateKeyPairSync('ed25519').private;
    if (!(ssh2.utils.parseKey(key) instanceof Error)) return key;
  }
}

const generators: Record<string, () => string> = {
  jwt: () => generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  'ssh-host': opensshEd25519,
  gateway: opensshEd25519,
  secret: () => randomBytes(32).toString('base64'),
};

export async function loadInstanceKeys(db: Knex, secrets: SecretBox): Promise<InstanceKeys> {
  const names = Object.keys(generators);
  let rows: { name: string; value: string }[] = await db('system_keys').whereIn('name', names);
  const missing = names.filter((n) => !rows.some((r) => r.name === n));
  if (missing.length) {
    // Two instances starting together may both generate: the first insert wins, both then read the winner.
    await db('system_keys')
      .insert(
        missing.map((name) => ({
          name,
          value: secrets.seal((generators[name] as () => string)(), SYSTEM_KEYS, name),
        })),
      )
      .onConflict('name')
      .ignore();
    rows = await db('system_keys').whereIn('name', names);
  }
  const get = (n: string) =>
    secrets.open((rows.find((r) => r.name === n) as { value: string }).value, SYSTEM_KEYS, n);
  const jwtPrivate = createPrivateKey(get('jwt'));
  return {
    jwtPrivate,
    jwtPublic: createPublicKey(jwtPrivate),
    sshHostKey: get('ssh-host'),
    gatewayKey: get('gateway'),
    secret: Buffer.from(get('secret'), 'base64'),
  };
}
