import { type Static, Type as T } from '@sinclair/typebox';
import { device, deviceUid } from '../devices/schemas';

export const sessionUidSchema = T.String({ pattern: '^[0-9a-f]{64}$', description: 'Session uid, 64 hex.' });

export const sessionEventSchema = T.Object({
  type: T.String({ description: 'The SSH request or channel, e.g. pty-req, shell, exec, window-change.' }),
  timestamp: T.String({ format: 'date-time' }),
  data: T.Optional(T.Unknown()),
  seat: T.Integer(),
});
export type SessionEvent = Static<typeof sessionEventSchema>;

export const sessionSchema = T.Object({
  uid: sessionUidSchema,
  device_uid: T.String(),
  device: T.Union([device, T.Null()], {
    description: 'The device as the devices API answers it; null once the device is deleted.',
  }),
  tenant_id: T.String({ format: 'uuid' }),
  username: T.String(),
  ip_address: T.String(),
  started_at: T.String({ format: 'date-time' }),
  last_seen: T.String({ format: 'date-time' }),
  active: T.Boolean({
    description:
      'Not closed, and vouched for by a gateway within the last 5 minutes (its heartbeat is 1 minute).',
  }),
  authenticated: T.Boolean(),
  recorded: T.Boolean(),
  recording_removed_at: T.Union([T.String({ format: 'date-time' }), T.Null()], {
    description:
      "When the session's recording was removed, else null. Its output is gone; the session and its events stay.",
  }),
  recording_removed_reason: T.Union([T.Literal('retention'), T.Null()], {
    description: "Why: retention, older than its namespace's settings.recording_retention_days.",
  }),
  recording_lost_bytes: T.Integer({
    minimum: 0,
    description:
      'Bytes of terminal output the recording does not hold because the store could not take them (retried, ' +
      'then given up on, or dropped past what a session keeps for retrying). 0 for a complete recording.',
  }),
  recording_lost_at: T.Union([T.String({ format: 'date-time' }), T.Null()], {
    description: 'When the recording first lost output, else null.',
  }),
  type: T.Union([T.Literal('web'), T.Literal('term')]),
  term: T.String(),
  position: T.Object({ latitude: T.Number(), longitude: T.Number() }),
  events: T.Object({
    types: T.Array(T.String()),
    seats: T.Array(T.Integer()),
    items: T.Array(sessionEventSchema),
  }),
});
/** The Session entity as the API answers it. */
export type Session = Static<typeof sessionSchema>;

export const recordEntrySchema = T.Object({
  uid: sessionUidSchema,
  seat: T.Integer({ minimum: 0 }),
  message: T.String(),
  tenant_id: T.String({ format: 'uuid' }),
  time: T.String({ format: 'date-time' }),
  width: T.Integer({ minimum: 0 }),
  height: T.Integer({ minimum: 0 }),
});
/** One recorded entry of a seat as the API answers it. */
export type RecordEntry = Static<typeof recordEntrySchema>;

export const uidParams = T.Object({ uid: sessionUidSchema });
export const seatParams = T.Object({
  uid: sessionUidSchema,
  seat: T.Integer({ minimum: 0, maximum: 1_000_000 }),
});

export const recordBody = T.Object({
  uid: sessionUidSchema,
  seat: T.Integer({ minimum: 0, maximum: 1_000_000 }),
  message: T.String({ maxLength: 1_048_576 }),
  width: T.Integer({ minimum: 0, maximum: 10_000 }),
  height: T.Integer({ minimum: 0, maximum: 10_000 }),
});

/** The filters of the sessions list; each one given narrows it, and they combine with and. */
export const sessionFilters = {
  username: T.Optional(
    T.String({
      minLength: 1,
      maxLength: 256,
      description: 'Only sessions as this account on the device (exact).',
    }),
  ),
  device_uid: T.Optional({ ...deviceUid, description: 'Only sessions on this device (or container).' }),
  active: T.Optional(T.Boolean({ description: 'true: only active sessions; false: only ended ones.' })),
  started_after: T.Optional(
    T.String({ format: 'date-time', description: 'Only sessions started at or after this time.' }),
  ),
  started_before: T.Optional(
    T.String({ format: 'date-time', description: 'Only sessions started before this time.' }),
  ),
};
