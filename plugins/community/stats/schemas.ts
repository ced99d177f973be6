import { type Static, Type as T } from '@sinclair/typebox';

/** A namespace's statistics: its devices by status, and its active sessions. */
export const stats = T.Object({
  registered_devices: T.Integer({ description: 'Accepted devices and containers.' }),
  online_devices: T.Integer(),
  pending_devices: T.Integer(),
  rejected_devices: T.Integer(),
  active_sessions: T.Integer(),
});
export type Stats = Static<typeof stats>;
