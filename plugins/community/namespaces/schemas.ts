import { type Static, Type as T } from '@sinclair/typebox';

/**
 * Namespace names appear in SSH user names (`user@<namespace>.<device>`), so they are DNS-label-like:
 * 3 to 30 lowercase letters, digits and hyphens, not starting or ending with a hyphen, and no dots.
 */
export const namespaceName = T.String({
  minLength: 3,
  maxLength: 30,
  pattern: '^[a-z0-9]([a-z0-9-]*[a-z0-9])?$',
});
export const NAMESPACE_NAME = /^[a-z0-9]([a-z0-9-]{1,28}[a-z0-9])$/;

/** A namespace name derived from a username (setup names the first namespace after its user). */
export function namespaceNameFor(username: string): string {
  const base = username
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 30)
    .replace(/-+$/, '');
  return base.length >= 3 ? base : `${base}-ns`.replace(/^-/, '');
}

const member = T.Object({
  id: T.String({ description: 'user id (24 hex)' }),
  username: T.String(),
  email: T.String(),
  role: T.Union([
    T.Literal('owner'),
    T.Literal('administrator'),
    T.Literal('operator'),
    T.Literal('observer'),
  ]),
  type: T.Union([T.Literal('personal'), T.Literal('team')]),
  status: T.Union([T.Literal('accepted'), T.Literal('pending')]),
  added_at: T.String({ format: 'date-time' }),
  expires_at: T.Optional(T.String({ format: 'date-time', description: 'cloud invites only' })),
});

/** The Namespace entity as the API answers it. */
export const namespaceView = T.Object({
  name: T.String(),
  owner: T.String({ description: 'user id of the owner' }),
  tenant_id: T.String({ format: 'uuid' }),
  members: T.Array(member),
  settings: T.Object({
    session_record: T.Boolean(),
    connection_announcement: T.String(),
    require_install_key: T.Boolean({
      description:
        'A new device registers only with one of the namespace install keys (install_key); the tenant ID alone ' +
        'is refused with 403. Off by default.',
    }),
    recording_retention_days: T.Integer({
      minimum: 0,
      description:
        "Days a session's recording is kept, counted from the session's start; 0 (the default) keeps recordings. " +
        'A recording removed for its age leaves recording_removed_at on its session.',
    }),
    session_share_links: T.Boolean({
      description:
        'Administrators may make time-limited, read-only links to a live recorded session, for people without ' +
        'an account. Off by default; turning it off stops every link (open views within 15 seconds).',
    }),
  }),
  max_devices: T.Integer({ description: '-1 unlimited, otherwise at least 3' }),
  device_count: T.Integer(),
  created_at: T.String({ format: 'date-time' }),
  billing: T.Union(
    [
      T.Object({
        customer_id: T.String({ description: "the namespace's customer at the payment provider" }),
        subscription: T.Optional(
          T.Object({
            id: T.String(),
            status: T.String({
              description: "the provider's subscription status (active, past_due, canceled ...)",
            }),
            current_period_end: T.Integer({ description: 'end of the paid period, unix seconds' }),
          }),
        ),
        created_at: T.Optional(T.String({ format: 'date-time' })),
        updated_at: T.Optional(T.String({ format: 'date-time' })),
      }),
      T.Null(),
    ],
    { description: 'null outside the cloud edition, and for a namespace that never had a customer' },
  ),
});
/** The Namespace entity as the API answers it, with its members. */
export type NamespaceView = Static<typeof namespaceView>;
/** A member as the Namespace entity lists it. */
export type MemberView = NamespaceView['members'][number];

/** The longest recording retention a namespace may set: ten years. */
export const MAX_RETENTION_DAYS = 3650;

export const namespaceSettings = T.Object(
  {
    session_record: T.Optional(T.Boolean()),
    connection_announcement: T.Optional(T.String({ maxLength: 4096 })),
    require_install_key: T.Optional(T.Boolean()),
    recording_retention_days: T.Optional(T.Integer({ minimum: 0, maximum: MAX_RETENTION_DAYS })),
    session_share_links: T.Optional(T.Boolean()),
  },
  { additionalProperties: false },
);

export const tenantParams = T.Object({ tenant: T.String({ format: 'uuid', description: 'tenant id' }) });
