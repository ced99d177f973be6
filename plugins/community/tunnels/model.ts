import { TenantModel } from '@gatehouse/core';
import { Device } from '../devices/model';

/** An HTTP tunnel of a device: `<address>.<tunnels domain>` reaches host:port through the device's agent. */
export class Tunnel extends TenantModel {
  static override tableName = 'tunnels';
  static override idColumn = 'address';

  declare address: string;
  declare tenant_id: string;
  declare device_uid: string;
  declare host: string;
  declare port: number;
  /** Seconds; -1 never expires. */
  declare ttl: number;
  /** Null for ttl -1. */
  declare expires_at: Date | null;
  declare created_at: Date;

  declare device?: Device;

  static override get relationMappings() {
    return {
      device: {
        relation: TenantModel.BelongsToOneRelation,
        modelClass: Device,
        join: { from: 'tunnels.device_uid', to: 'devices.uid' },
      },
    };
  }
}
