import { TenantModel } from '@gatehouse/core';

/** A public key of a namespace that signs users in to its devices. */
export class PublicKey extends TenantModel {
  static override tableName = 'public_keys';
  static override idColumn = ['tenant_id', 'fingerprint'];

  declare tenant_id: string;
  declare fingerprint: string;
  declare data: string;
  declare name: string;
  declare username: string;
  /** Exactly one of the two filters is set: a hostname regular expression, or 1 to 3 tags. */
  declare filter_hostname: string | null;
  declare filter_tags: string[] | null;
  declare created_at: Date;
}
