import { StoreModel, TenantModel } from '@gatehouse/core';

/**
 * A connector to a container engine: the connector process beside the engine dials in with the token whose hash is
 * `token_hash`; `address` and `port` are where that process says it reaches its engine (a Unix socket's path with
 * port 0, or a TCP host and port). `tls` holds the sealed JSON of the TLS material the server speaks to a `secure`
 * engine with, end to end through the connector.
 */
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
  /** SHA-256 (hex) of the connector token's secret; null for a connector made before tokens, until one is made. */
  declare token_hash: string | null;
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
