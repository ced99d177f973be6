import { StoreModel, TenantModel } from '@gatehouse/core';

/** A connector to a container engine (SPEC.md section 3). `tls` holds the sealed JSON of its TLS material. */
export class Connector extends TenantModel {
  static override tableName = 'connectors';
  static override idColumn = 'uid';

  declare uid: string;
  declare tenant_id: string;
  declare enable: boolean;
  declare address: string;
  declare port: number;
  declare secure: boolean;
  declare tls: string | null;
  declare status_state: 'connected' | 'disconnected';
  declare status_message: string;
  declare created_at: Date;
  declare updated_at: Date;
}

/**
 * Which connector and engine container a container device stands for. It has no tenant column: its device row
 * (`devices.uid`) and its connector carry the tenant, and it is written only by the connector watchers, which span
 * every tenant on purpose.
 */
export class ConnectorContainer extends StoreModel {
  static override tableName = 'connector_containers';
  static override idColumn = 'device_uid';

  declare device_uid: string;
  declare connector_uid: string;
  declare container_id: string;
  declare running: boolean;
}
