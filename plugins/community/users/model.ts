import { StoreModel } from '@gatehouse/core';

/** A user account. Users belong to no one tenant: namespaces reach them through members. */
export class User extends StoreModel {
  static override tableName = 'users';

  declare id: string;
  declare name: string;
  declare username: string;
  declare email: string;
  declare recovery_email: string | null;
  declare password_hash: string;
  declare password_changed_at: Date;
  declare mfa_enabled: boolean;
  /** Sealed with the operator's key (core/secrets.ts). */
  declare mfa_secret: string | null;
  declare max_namespaces: number;
  declare status: string;
  declare email_marketing: boolean;
  /** An instance administrator (the setup user, and whoever the CLI or another administrator names). */
  declare admin: boolean;
  declare origin: 'local' | 'saml';
  declare preferred_namespace: string | null;
  declare last_login: Date | null;
  declare created_at: Date;
  declare updated_at: Date;
}

/**
 * A sign-in ended before its tokens expire (sign-out): every token that carries its id is refused, on every
 * instance, until `expires_at`, when the last of them has expired anyway.
 */
export class EndedSignIn extends StoreModel {
  static override tableName = 'ended_sign_ins';
  static override idColumn = 'sign_in';

  declare sign_in: string;
  declare user_id: string;
  declare ended_at: Date;
  declare expires_at: Date;
}
