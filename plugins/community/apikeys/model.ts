import { type Role, TenantModel } from '@gatehouse/core';

/** An API key of a namespace, found by the SHA-256 of the key; the key itself is not kept. */
export class ApiKey extends TenantModel {
  static override tableName = 'api_keys';
  static override idColumn = 'key_digest';

  declare key_digest: string;
  declare tenant_id: string;
  declare name: string;
  /** User id of the account that made it: the key speaks for that account. */
  declare created_by: string;
  declare role: Role;
  /** Unix time of expiry; -1 never expires. A bigint column: read as a number (core/store/db.ts). */
  declare expires_in: number;
  declare created_at: Date;
  declare updated_at: Date;
}
