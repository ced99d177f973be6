import { StoreModel } from '@gatehouse/core';

/**
 * SAML as instance administrators set it up in the console: one row for the installation (no tenant owns it). The
 * SP key is sealed with the operator's key; the rest of the settings are JSON.
 */
export class SamlSettingsRow extends StoreModel {
  static override tableName = 'saml_settings';

  declare id: number;
  declare enabled: boolean;
  declare settings: Record<string, unknown> | string;
  /** Sealed (core/secrets.ts). */
  declare sp_private_key: string | null;
  declare updated_at: Date;
  declare updated_by: string | null;
}
