import { isRole, type Role, TenantModel, TenantStore } from '@gatehouse/core';
import type { Knex } from 'knex';
import { User } from '../users/model';

/** A user's membership of a namespace, with their role (SPEC.md section 3). */
export class Member extends TenantModel {
  static override tableName = 'namespace_members';
  static override idColumn = ['tenant_id', 'user_id'];

  declare tenant_id: string;
  declare user_id: string;
  declare role: Role;
  declare status: string;
  declare added_at: Date;
  declare expires_at: Date | null;

  declare user?: User;

  /** The role `userId` holds in `tenantId`: undefined for a pending invitation or no membership. */
  static async acceptedRole(db: Knex, tenantId: string, userId: string): Promise<Role | undefined> {
    const row = await new TenantStore(db, tenantId)
      .query(Member)
      .where({ user_id: userId, status: 'accepted' })
      .select('role')
      .first();
    return row && isRole(row.role) ? row.role : undefined;
  }

  static override get relationMappings() {
    return {
      user: {
        relation: TenantModel.BelongsToOneRelation,
        modelClass: User,
        join: { from: 'namespace_members.user_id', to: 'users.id' },
      },
    };
  }
}
