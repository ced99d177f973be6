import { type Static, Type as T } from '@sinclair/typebox';

export const keyName = T.String({ minLength: 3, maxLength: 20, pattern: '^[^\\s/]+(?: [^\\s/]+)*$' });
export const role = T.Union(
  [T.Literal('owner'), T.Literal('administrator'), T.Literal('operator'), T.Literal('observer')],
  { description: 'not above your own role' },
);
/** The API key entity: never the key itself, which is answered once, at creation. */
export const apiKey = T.Object({
  name: T.String(),
  tenant_id: T.String({ format: 'uuid' }),
  created_by: T.String({ description: 'user id of the creator' }),
  role,
  expires_in: T.Integer({ description: 'unix time of expiry; -1 never' }),
  created_at: T.String({ format: 'date-time' }),
  updated_at: T.String({ format: 'date-time' }),
});
export type ApiKeyView = Static<typeof apiKey>;

/** A new API key as its creation answers it: with the key itself, as `id`. */
export const createdApiKey = T.Composite([T.Object({ id: T.String({ format: 'uuid' }) }), apiKey]);
export type CreatedApiKey = Static<typeof createdApiKey>;
