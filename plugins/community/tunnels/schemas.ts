import { type Static, Type as T } from '@sinclair/typebox';
import { deviceUid } from '../devices/schemas';

/** The Tunnel entity. */
export const tunnel = T.Object({
  address: T.String({ pattern: '^[0-9a-f]{32}$' }),
  namespace: T.String(),
  device: deviceUid,
  host: T.String(),
  port: T.Integer({ minimum: 1, maximum: 65535 }),
  ttl: T.Integer({ minimum: -1 }),
  expires_in: T.Union([T.String({ format: 'date-time' }), T.Null()], {
    description: 'When the tunnel stops answering; null for ttl -1 (never).',
  }),
  created_at: T.String({ format: 'date-time' }),
});
/** The Tunnel entity as the API answers it: `expires_in` is when it stops answering, null for ttl -1. */
export type TunnelView = Static<typeof tunnel>;
