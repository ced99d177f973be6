import { TenantModel } from '@gatehouse/core';

/**
 * An install key of a namespace: a secret the namespace's agents present when a new device registers. Only the
 * SHA-256 of the key is kept, found by `lookup`, the public part the key text begins with.
 */
export class InstallKey extends TenantModel {
  static override tableName = 'install_keys';
  static override idColumn = 'id';

  declare id: string;
  declare tenant_id: string;
  declare name: string;
  declare lookup: string;
  declare key_digest: string;
  /** User id of the account that made it. */
  declare created_by: string;
  /** Null: never expires. */
  declare expires_at: Date | null;
  /** How many devices may register with the key; 0: no limit. */
  declare usage_limit: number;
  declare used_times: number;
  declare last_used_at: Date | null;
  declare created_at: Date;
  declare updated_at: Date;
}
