import { TenantModel } from '@gatehouse/core';

/**
 * An e-mailed invitation to a namespace, one per namespace and address. `id` is the member id
 * the link names (the invitee's user id, or a new one for an address without an account); only a digest of the
 * link's signature is kept, unique across the installation.
 */
export class Invitation extends TenantModel {
  static override tableName = 'member_invites';
  static override idColumn = ['tenant_id', 'id'];

  declare id: string;
  declare tenant_id: string;
  declare email: string;
  declare role: string;
  declare invited_by: string | null;
  declare digest: string;
  declare expires_at: Date;
  declare accepted_at: Date | null;
  declare created_at: Date;
}
