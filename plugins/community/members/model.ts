import { type Role, TenantModel } from '@gatehouse/core';
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
