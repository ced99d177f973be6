import { StoreModel } from '@gatehouse/core';

/** One MFA recovery code of a user, kept as its SHA-256 digest; spent once (`used_at`). */
export class RecoveryCode extends StoreModel {
  static override tableName = 'mfa_recovery_codes';
  static override idColumn = ['user_id', 'code_digest'];

  declare user_id: string;
  declare code_digest: string;
  declare used_at: Date | null;
}
