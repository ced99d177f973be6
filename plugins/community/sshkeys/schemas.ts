import { type Static, Type as T } from '@sinclair/typebox';
import { deviceFilterSchema, tagSchema } from '../matching/schemas';

/** Fingerprints are MD5 of the key blob as colon-separated hex pairs. */
export const fingerprintSchema = T.String({
  pattern: '^[0-9a-f]{2}(:[0-9a-f]{2}){15}$',
  description: 'MD5 fingerprint of the key, hex pairs separated by colons.',
});

const usernamePattern = T.String({
  minLength: 1,
  maxLength: 255,
  description: 'Regular expression (RE2) on the device user name that this key may sign in as.',
});

export const publicKeySchema = T.Object({
  data: T.String({ description: 'Base64 of the authorized_keys line.' }),
  fingerprint: fingerprintSchema,
  name: T.String(),
  username: T.String(),
  filter: deviceFilterSchema,
  tenant_id: T.String({ format: 'uuid' }),
  created_at: T.String({ format: 'date-time' }),
});
/** The public key entity as the API answers it. */
export type PublicKeyView = Static<typeof publicKeySchema>;

export const createPublicKeyBody = T.Object({
  data: T.String({ minLength: 1, maxLength: 16384, description: 'Base64 of the authorized_keys line.' }),
  filter: deviceFilterSchema,
  name: T.String({ minLength: 1, maxLength: 255 }),
  username: usernamePattern,
});

export const updatePublicKeyBody = T.Object({
  filter: T.Optional(deviceFilterSchema),
  name: T.Optional(T.String({ minLength: 1, maxLength: 255 })),
  username: T.Optional(usernamePattern),
});

export const fingerprintParams = T.Object({ fingerprint: fingerprintSchema });
export const fingerprintTagParams = T.Object({ fingerprint: fingerprintSchema, tag: tagSchema });

export const gatewaySignBody = T.Object({
  fingerprint: fingerprintSchema,
  data: T.String({ minLength: 1, maxLength: 65536, description: 'Base64 of the blob the gateway signed.' }),
});
export const gatewaySignAnswer = T.Object({
  signature: T.String({ description: 'Base64 Ed25519 signature of the blob by the gateway key.' }),
});
