import { type Static, Type as T } from '@sinclair/typebox';

/** Device uid: 64 hex characters. */
export const deviceUid = T.String({
  pattern: '^[0-9a-f]{64}$',
  description: 'Device uid, 64 hex characters.',
});

export const deviceStatuses = ['accepted', 'rejected', 'pending', 'removed', 'unused'] as const;
export type DeviceStatus = (typeof deviceStatuses)[number];

/**
 * Device names appear in SSH user names (`user@namespace.name`), so they are hostname-like: letters, digits and
 * hyphens, 1 to 63 characters, not starting or ending with a hyphen (RFC 1123 labels).
 */
export const deviceName = T.String({
  minLength: 1,
  maxLength: 63,
  pattern: '^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$',
  description: 'Hostname-like name, unique among the accepted devices of a namespace.',
});

/** Tag: 3 to 255 characters; no slash or white space, since tags travel in paths. */
export const tag = T.String({ minLength: 3, maxLength: 255, pattern: '^[^/\\s]+$' });

/** Most custom fields one device holds; setting one more key is 400 ["key"]. */
export const MAX_CUSTOM_FIELDS = 32;

/**
 * A custom field's key: 1 to 64 letters, digits, `_`, `-` or `.`, and not `.` or `..`. It travels in paths (where a
 * browser would fold `.` and `..` into the path around them, reaching another route) and names a list filter and
 * sort field (`custom_fields.<key>`), so it holds nothing a path, a query or a JSON path reads specially.
 */
export const CUSTOM_FIELD_KEY_PATTERN = '(?!\\.{1,2}$)[A-Za-z0-9_.-]{1,64}';
export const customFieldKey = T.String({
  minLength: 1,
  maxLength: 64,
  pattern: `^${CUSTOM_FIELD_KEY_PATTERN}$`,
  description: 'Custom field key: 1 to 64 letters, digits, `_`, `-` or `.`, and not `.` or `..`.',
});

export const customFieldValue = T.String({
  maxLength: 256,
  description: 'Custom field value, at most 256 characters.',
});

export const deviceInfo = T.Object({
  id: T.String({ maxLength: 64, description: 'Distribution id from /etc/os-release.' }),
  pretty_name: T.String({ maxLength: 255 }),
  version: T.String({ maxLength: 64, description: 'Agent version.' }),
  arch: T.String({ maxLength: 32 }),
  platform: T.Union([T.Literal('docker'), T.Literal('native')]),
});

/** Body of the agent's `POST /api/devices/auth` (see docs/content/developers/agent/protocol.md). */
export const deviceAuthBody = T.Object({
  info: deviceInfo,
  sessions: T.Array(T.String({ maxLength: 128 }), { maxItems: 1024 }),
  hostname: T.String({ maxLength: 255 }),
  identity: T.Object({ mac: T.String({ minLength: 1, maxLength: 64 }) }),
  public_key: T.String({ minLength: 1, maxLength: 16_384, description: 'The device public key (PEM).' }),
  tenant_id: T.String({ format: 'uuid' }),
  install_key: T.Optional(
    T.String({
      minLength: 1,
      maxLength: 128,
      description:
        'An install key of the namespace (the agent sends GATEHOUSE_INSTALL_KEY). Checked only when a new device ' +
        'registers: required where the namespace requires one, and a key that is not valid is refused (403).',
    }),
  ),
});

export const deviceAuthAnswer = T.Object({
  uid: deviceUid,
  token: T.String({ description: 'Device token (JWT) for the tunnel and device calls.' }),
  name: T.String(),
  namespace: T.String(),
});

/** The Device entity (containers have the same shape). */
export const device = T.Object({
  uid: deviceUid,
  name: T.String(),
  identity: T.Object({ mac: T.String() }),
  info: deviceInfo,
  public_key: T.String(),
  tenant_id: T.String(),
  last_seen: T.String({ format: 'date-time' }),
  online: T.Boolean(),
  namespace: T.String(),
  status: T.Union(deviceStatuses.map((s) => T.Literal(s))),
  status_update_at: T.String({ format: 'date-time' }),
  created_at: T.String({ format: 'date-time' }),
  remote_addr: T.String(),
  position: T.Object({ latitude: T.Number(), longitude: T.Number() }),
  tags: T.Array(T.String()),
  custom_fields: T.Record(T.String(), T.String(), {
    description: `The namespace's own key-value metadata of the device (at most ${MAX_CUSTOM_FIELDS} keys).`,
  }),
  public_url: T.Boolean(),
  acceptable: T.Boolean({ description: 'Whether accepting it now would succeed within the device limit.' }),
  identity_conflict: T.Union([T.Object({ uid: deviceUid, name: T.String() }), T.Null()], {
    description:
      'On a device not accepted: the accepted device of the namespace with the same identity (MAC) but another ' +
      'key, else null. This registration is another device (a reinstalled agent, or an impostor); accepting it ' +
      'never replaces that one.',
  }),
});
/** The Device entity as the API answers it. */
export type DeviceView = Static<typeof device>;

export const deviceUpdate = T.Object(
  {
    name: T.Optional(deviceName),
    public_url: T.Optional(T.Boolean()),
  },
  { additionalProperties: false },
);
