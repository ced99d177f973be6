import { type Static, Type as T } from '@sinclair/typebox';

/** An install key's name: 3 to 20 characters, unique in the namespace (case-insensitively). */
export const keyName = T.String({ minLength: 3, maxLength: 20, pattern: '^[A-Za-z0-9_.-]+$' });

/** An install key as the API answers it: never the key itself, which is answered once (create, rotate). */
export const installKey = T.Object({
  id: T.String({ format: 'uuid' }),
  tenant_id: T.String({ format: 'uuid' }),
  name: T.String(),
  key_hint: T.String({ description: 'The public beginning of the key text, to tell keys apart.' }),
  created_by: T.String({ description: 'user id of the creator' }),
  expires_at: T.Union([T.String({ format: 'date-time' }), T.Null()], { description: 'null: never expires' }),
  usage_limit: T.Integer({ description: 'how many devices may register with the key; 0: no limit' }),
  used_times: T.Integer({ description: 'how many devices have registered with the key' }),
  last_used_at: T.Union([T.String({ format: 'date-time' }), T.Null()]),
  created_at: T.String({ format: 'date-time' }),
  updated_at: T.String({ format: 'date-time' }),
});
export type InstallKeyView = Static<typeof installKey>;

/** A new or rotated install key as its call answers it: with the key itself. */
export const installKeyWithKey = T.Composite([
  installKey,
  T.Object({
    key: T.String({
      description: 'The install key itself (GATEHOUSE_INSTALL_KEY of the agent). Answered only here, once.',
    }),
  }),
]);
export type InstallKeyWithKey = Static<typeof installKeyWithKey>;
