import { TenantModel } from '@gatehouse/core';
import { Namespace } from '../namespaces/model';
import type { DeviceStatus } from './schemas';

/** Which list a device is in: every agent is a `device`; `container` is for containers a connector exposes. */
export type DeviceKind = 'device' | 'container';

/** A device (or a container a connector exposes: the same rows, kind `container`) of a namespace. */
export class Device extends TenantModel {
  static override tableName = 'devices';
  static override idColumn = 'uid';

  declare uid: string;
  declare tenant_id: string;
  declare name: string;
  declare identity: { mac: string };
  declare info: {
    id: string;
    pretty_name: string;
    version: string;
    arch: string;
    platform: 'docker' | 'native';
  };
  declare kind: DeviceKind;
  declare public_key: string;
  declare hostname: string;
  declare status: DeviceStatus;
  declare status_update_at: Date;
  /** Rewritten by every availability call; indexed for the list's default order (devices_recent_idx). */
  declare last_seen: Date;
  /** True while a tunnel of this device is up on some server. */
  declare connected: boolean;
  declare remote_addr: string;
  declare tags: string[];
  /** Custom fields: a JSON object of strings (at most MAX_CUSTOM_FIELDS keys). */
  declare custom_fields: Record<string, string>;
  declare public_url: boolean;
  declare removed_at: Date | null;
  declare created_at: Date;

  /** Its namespace (the tenant row), for the namespace name the API shows beside a device. */
  declare namespace?: Namespace;

  static override get relationMappings() {
    return {
      namespace: {
        relation: TenantModel.BelongsToOneRelation,
        modelClass: Namespace,
        join: { from: 'devices.tenant_id', to: 'namespaces.tenant_id' },
      },
    };
  }
}

/**
 * How many devices of one kind a namespace has in each status: kept by a trigger on `devices` in the same
 * transaction as every change (plugins/community/migrations/20261204000000_device_counts.ts), so it is exact. The device
 * list's unfiltered total reads it instead of counting the namespace's rows.
 */
export class DeviceCount extends TenantModel {
  static override tableName = 'device_counts';
  static override idColumn = ['tenant_id', 'kind'];

  declare tenant_id: string;
  declare kind: DeviceKind;
  declare accepted: number;
  declare pending: number;
  declare rejected: number;
  declare removed: number;
  declare unused: number;
}

/**
 * How many devices of one kind and status in a namespace carry a tag: kept by triggers on `devices` like
 * `DeviceCount` (plugins/community/migrations/20261206000000_device_tag_counts.ts). The list filtered by one tag reads its
 * exact total here.
 */
export class DeviceTagCount extends TenantModel {
  static override tableName = 'device_tag_counts';
  static override idColumn = ['tenant_id', 'kind', 'status', 'tag'];

  declare tenant_id: string;
  declare kind: DeviceKind;
  declare status: DeviceStatus;
  declare tag: string;
  declare n: number;
}
