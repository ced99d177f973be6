import { StoreModel } from '@gatehouse/core';

/**
 * A one-time token of a mailed account link (e-mail verification, password recovery). Only its SHA-256 is kept;
 * one per user and purpose. The token belongs to a user, not to a namespace, so no tenant binds it.
 */
export class AccountToken extends StoreModel {
  static override tableName = 'account_tokens';
  static override idColumn = ['user_id', 'purpose'];

  declare user_id: string;
  declare purpose: 'verify' | 'recover';
  declare digest: string;
  declare expires_at: Date;
  declare created_at: Date;
}
