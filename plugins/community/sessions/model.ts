import { StoreModel, TenantModel } from '@gatehouse/core';
import { Device } from '../devices/model';

/** An event of a session (a window change, a command...), reached through its session. */
export class SessionEvent extends StoreModel {
  static override tableName = 'session_events';

  declare id: number;
  declare session_uid: string;
  declare type: string;
  declare timestamp: Date;
  declare data: unknown;
  declare seat: number;
}

/** Recorded terminal output of one seat of a session: asciicast entries written while it runs. */
export class SessionRecord extends TenantModel {
  static override tableName = 'session_records';

  declare id: number;
  declare session_uid: string;
  declare tenant_id: string;
  declare seat: number;
  declare message: string;
  declare time: Date;
  declare width: number;
  declare height: number;
}

/** A connection through the SSH gateway or the web terminal. */
export class Session extends TenantModel {
  static override tableName = 'sessions';
  static override idColumn = 'uid';

  declare uid: string;
  declare tenant_id: string;
  declare device_uid: string;
  declare username: string;
  declare ip_address: string;
  declare started_at: Date;
  declare last_seen: Date;
  declare closed_at: Date | null;
  declare authenticated: boolean;
  declare recorded: boolean;
  declare type: 'web' | 'term';
  declare term: string;
  declare position: { latitude: number; longitude: number };
  /** When its recording was removed, and why (`retention`: older than its namespace keeps recordings). */
  declare recording_removed_at: Date | null;
  declare recording_removed_reason: 'retention' | null;
  /** Output the recording lost because the store could not take it, and when the first of it was lost. */
  declare recording_lost_bytes: number | string;
  declare recording_lost_at: Date | null;
  /** The gateway instance carrying it; null on rows written before instances were named. */
  declare instance: string | null;
  /** Not a column: read with the store's clock where a session is shown (sessions/service.ts, LIVE_WINDOW_SECONDS). */
  declare live?: boolean;

  declare device?: Device | null;
  declare events?: SessionEvent[];

  static override get relationMappings() {
    return {
      device: {
        relation: TenantModel.BelongsToOneRelation,
        modelClass: Device,
        join: { from: 'sessions.device_uid', to: 'devices.uid' },
      },
      events: {
        relation: TenantModel.HasManyRelation,
        modelClass: SessionEvent,
        join: { from: 'sessions.uid', to: 'session_events.session_uid' },
      },
    };
  }
}

/** A read-only, time-limited link to a live session, for someone without an account (gateway/shares.ts). */
export class SessionShare extends TenantModel {
  static override tableName = 'session_shares';

  declare id: string;
  declare tenant_id: string;
  declare session_uid: string;
  /** SHA-256 of the link's token, hex: the token itself is given once, when the link is made. */
  declare token_hash: string;
  declare created_by: string;
  declare created_by_name: string;
  declare created_at: Date;
  declare expires_at: Date;
  declare revoked_at: Date | null;
  declare uses: number;
  declare last_used_at: Date | null;
}
