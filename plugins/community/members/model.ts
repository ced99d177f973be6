import { isRole, type Role, TenantModel, TenantStore } from '@gatehouse/core';
import type { Knex } from 'knex';
import type { ReferenceBuilder } from 'objection';
import { User } from '../users/model';

/** A user's membership of a namespace, with their role. */
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
    const row = await Member.acceptedRoleOf(db, tenantId, userId).first();
    return row && isRole(row.role) ? row.role : undefined;
  }

  /**
   * The query of the role `user` holds in `tenantId` (a user id, or a reference to one such as `ref('users.id')`,
   * so that it can be a subquery of a read of the user).
   */
  static acceptedRoleOf(db: Knex, tenantId: string, user: string | ReferenceBuilder) {
    return new TenantStore(db, tenantId)
      .query(Member)
      .where('namespace_members.user_id', user)
      .where('namespace_members.status', 'accepted')
      .select('namespace_members.role')
      .limit(1);
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
