import { createPrivateKey, X509Certificate } from 'node:crypto';
import { Invalid, isRole, type SealedColumn, type SecretBox } from '@gatehouse/core';
import type { Knex } from 'knex';
import type { SamlConfig } from './config';
import { splitCertificates } from './idp-metadata';
import { SamlSettingsRow } from './model';

/** Which SAML attributes hold what (the docs' mapping page). Unset names fall back to the usual attributes. */
export interface AttributeNames {
  email?: string;
  name?: string;
  username?: string;
  namespace?: string;
  role?: string;
}

/**
 * SAML as an operator set it up: from the `saml.*` config keys (then the console shows it read-only) or from the
 * console's instance area (kept in `saml_settings`). The IdP comes from its metadata (address or document) or is
 * given by hand (entity ID, sign-in address, certificates).
 */
export interface SamlSettings {
  source: 'config' | 'console';
  enabled: boolean;
  idpMetadataUrl?: string;
  idpMetadataXml?: string;
  idpEntityId?: string;
  idpSsoUrl?: string;
  idpCertificate?: string;
  spEntityId?: string;
  signRequests: boolean;
  spPrivateKey?: string;
  spCertificate?: string;
  localLogin: boolean;
  /** Accept unsolicited assertions (sign-ins started at the IdP, from its app tiles): off unless turned on. */
  idpInitiated: boolean;
  attributes: AttributeNames;
}

/** The SP key is sealed with the operator's key (core/secrets.ts); the table holds one row. */
export const SAML_SP_KEY: SealedColumn = { table: 'saml_settings', column: 'sp_private_key', key: 'id' };
const ROW_ID = 1;

/** Whether the `saml.*` config keys set SAML up (any IdP key): then they are the settings, and the console reads. */
export function configured(s: SamlConfig): boolean {
  return Boolean(s.idpMetadataUrl || s.idpMetadataXml || s.idpSsoUrl || s.idpEntityId || s.idpCertificate);
}

export function fromConfig(s: SamlConfig): SamlSettings {
  return {
    source: 'config',
    enabled: true,
    idpMetadataUrl: s.idpMetadataUrl,
    idpMetadataXml: s.idpMetadataXml,
    idpEntityId: s.idpEntityId,
    idpSsoUrl: s.idpSsoUrl,
    idpCertificate: s.idpCertificate,
    spEntityId: s.spEntityId,
    signRequests: s.signRequests ?? false,
    spPrivateKey: s.spPrivateKey,
    spCertificate: s.spCertificate,
    localLogin: s.localLogin ?? true,
    idpInitiated: s.idpInitiated ?? false,
    attributes: { ...s.attributes },
  };
}

const disabled: SamlSettings = {
  source: 'console',
  enabled: false,
  signRequests: false,
  localLogin: true,
  idpInitiated: false,
  attributes: {},
};

/** The console's settings, as stored (the SP key opened). */
export async function readStored(db: Knex, secrets: SecretBox): Promise<SamlSettings> {
  const row = await SamlSettingsRow.bindKnex(db).query().findById(ROW_ID);
  if (!row) return disabled;
  const stored = typeof row.settings === 'string' ? JSON.parse(row.settings) : row.settings;
  return {
    ...disabled,
    ...stored,
    source: 'console',
    enabled: row.enabled,
    spPrivateKey: row.sp_private_key
      ? secrets.open(row.sp_private_key, SAML_SP_KEY, String(ROW_ID))
      : undefined,
  };
}

export async function writeStored(
  db: Knex,
  secrets: SecretBox,
  settings: SamlSettings,
  updatedBy: string | undefined,
): Promise<void> {
  const { source: _source, enabled, spPrivateKey, ...rest } = settings;
  await SamlSettingsRow.bindKnex(db)
    .query()
    .insert({
      id: ROW_ID,
      enabled,
      settings: JSON.stringify(rest),
      sp_private_key: spPrivateKey ? secrets.seal(spPrivateKey, SAML_SP_KEY, String(ROW_ID)) : null,
      updated_at: new Date(),
      updated_by: updatedBy ?? null,
    })
    .onConflict('id')
    .merge();
}

/**
 * Checks settings before they are used or saved; 400 names the fields at fault (API names). An enabled set-up needs
 * an IdP (metadata, or entity ID, sign-in address and a certificate); signing needs a key and its certificate.
 */
export function checkSettings(s: SamlSettings): void {
  const bad: string[] = [];
  if (s.idpCertificate !== undefined && s.idpCertificate !== '') {
    const pems = splitCertificates(s.idpCertificate);
    if (!pems.length || !pems.every(isCertificate)) bad.push('idp_certificate');
  }
  if (s.enabled && !s.idpMetadataUrl && !s.idpMetadataXml) {
    if (!s.idpEntityId) bad.push('idp_entity_id');
    if (!s.idpSsoUrl) bad.push('idp_sso_url');
    if (!s.idpCertificate) bad.push('idp_certificate');
  }
  if (s.spCertificate && !isCertificate(s.spCertificate)) bad.push('sp_certificate');
  if (s.signRequests) {
    if (!s.spPrivateKey) bad.push('sp_private_key');
    if (!s.spCertificate) bad.push('sp_certificate');
    if (s.spPrivateKey && s.spCertificate && !keyMatches(s.spPrivateKey, s.spCertificate))
      bad.push('sp_private_key');
  }
  if (bad.length) throw new Invalid([...new Set(bad)]);
}

function isCertificate(pem: string): boolean {
  try {
    new X509Certificate(pem);
    return true;
  } catch {
    return false;
  }
}

function keyMatches(keyPem: string, certPem: string): boolean {
  try {
    return new X509Certificate(certPem).checkPrivateKey(createPrivateKey(keyPem));
  } catch {
    return false;
  }
}

/** SAML gives the role as text; only member roles below owner are granted through it (owner stays a local act). */
export function grantedRole(value: string | undefined): 'administrator' | 'operator' | 'observer' {
  const role = value?.trim().toLowerCase();
  return role && isRole(role) && role !== 'owner' ? role : 'observer';
}
