import { type Static, Type as T } from '@sinclair/typebox';

/** A user as instance administration shows it: never the password hash or MFA secret. */
export const adminUser = T.Object({
  id: T.String({ pattern: '^[0-9a-f]{24}$' }),
  name: T.String(),
  username: T.String(),
  email: T.String(),
  admin: T.Boolean({ description: 'an instance administrator' }),
  disabled: T.Boolean({ description: 'cannot sign in; its tokens and the API keys it created stop working' }),
  mfa: T.Boolean(),
  namespaces: T.Integer({ description: 'namespaces the user is a member of' }),
  created_at: T.String({ format: 'date-time' }),
  last_login: T.Union([T.String({ format: 'date-time' }), T.Null()]),
});
export type AdminUserView = Static<typeof adminUser>;

/** A namespace as instance administration shows it. */
export const adminNamespace = T.Object({
  tenant_id: T.String({ format: 'uuid' }),
  name: T.String(),
  owner: T.String({ description: 'user id of the owner' }),
  owner_username: T.String(),
  members: T.Integer(),
  device_count: T.Integer({ description: 'accepted devices' }),
  max_devices: T.Integer({ description: '-1 unlimited' }),
  created_at: T.String({ format: 'date-time' }),
});
export type AdminNamespaceView = Static<typeof adminNamespace>;

/** The server's health: version, uptime, store and cache, counts. */
export const health = T.Object({
  version: T.String(),
  edition: T.String(),
  uptime_seconds: T.Integer(),
  store: T.Object({
    kind: T.Union([T.Literal('embedded'), T.Literal('postgresql')]),
    ok: T.Boolean(),
    ms: T.Number({ description: 'time of a round trip to the store' }),
  }),
  cache: T.Object({ kind: T.Union([T.Literal('redis'), T.Literal('in-process')]) }),
  users: T.Integer(),
  disabled_users: T.Integer(),
  namespaces: T.Integer(),
  devices: T.Object({ accepted: T.Integer(), pending: T.Integer() }),
  memory: T.Object({ rss_bytes: T.Integer(), heap_used_bytes: T.Integer() }),
  listeners: T.Object({ http: T.Integer(), ssh: T.Integer() }),
});
export type Health = Static<typeof health>;
