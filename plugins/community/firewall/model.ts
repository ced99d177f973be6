import { TenantModel } from '@gatehouse/core';

/** A firewall rule of a namespace: who may reach which devices, by priority. */
export class FirewallRule extends TenantModel {
  static override tableName = 'firewall_rules';

  declare id: string;
  declare tenant_id: string;
  declare priority: number;
  declare action: 'allow' | 'deny';
  declare active: boolean;
  declare source_ip: string;
  declare username: string;
  declare filter_hostname: string | null;
  declare filter_tags: string[] | null;
  declare created_at: Date;
}
