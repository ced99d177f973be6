import { StoreModel } from '@gatehouse/core';
import { Member } from '../members/model';
import { User } from '../users/model';

export interface NamespaceSettings {
  session_record: boolean;
  connection_announcement: string;
  /** A new device registers only with one of the namespace's install keys; absent in rows from before: off. */
  require_install_key?: boolean;
  /** Days a session's recording is kept (counted from the session's start); absent or 0 keeps it. */
  recording_retention_days?: number;
  /** Read-only links to a live session may be made for people without an account; absent: off. */
  session_share_links?: boolean;
}

/**
 * A namespace: the tenant itself (its `tenant_id` is the key every tenant-owned row names). Not a tenant model: a
 * user lists the namespaces of all their memberships, and its rows are reached by their key.
 */
export class Namespace extends StoreModel {
  static override tableName = 'namespaces';
  static override idColumn = 'tenant_id';

  declare tenant_id: string;
  declare name: string;
  declare owner: string;
  declare type: string;
  declare settings: NamespaceSettings;
  declare max_devices: number;
  declare created_at: Date;

  declare members?: Member[];
  declare ownerUser?: User;

  static override get relationMappings() {
    return {
      members: {
        relation: StoreModel.HasManyRelation,
        modelClass: Member,
        join: { from: 'namespaces.tenant_id', to: 'namespace_members.tenant_id' },
      },
      ownerUser: {
        relation: StoreModel.BelongsToOneRelation,
        modelClass: User,
        join: { from: 'namespaces.owner', to: 'users.id' },
      },
    };
  }
}
