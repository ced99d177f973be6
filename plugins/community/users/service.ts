import { randomBytes } from 'node:crypto';
import {
  type Cache,
  type Config,
  Conflict,
  Forbidden,
  fromDatabaseError,
  type Hooks,
  Invalid,
  isRole,
  NotFound,
  type PasswordHashing,
  type Role,
  type TokenClaims,
  type TokenService,
  Unauthorized,
  type UserCaller,
} from '@gatehouse/core';
import type { Knex } from 'knex';
import { raw, ref } from 'objection';
import { Member } from '../members/model';
import { EndedSignIn, User } from './model';

/** What `callerFor` reads of a user, with the role in the token's namespace when it names one. */
type CallerRow = Pick<UserRow, 'id' | 'username' | 'status' | 'password_changed_at' | 'admin'> & {
  role?: string | null;
  signed_out: boolean;
};

export interface UserRow {
  id: string;
  name: string;
  username: string;
  email: string;
  recovery_email: string | null;
  password_hash: string;
  password_changed_at: Date;
  mfa_enabled: boolean;
  mfa_secret: string | null;
  max_namespaces: number;
  status: string;
  /** How the account was made: with a password, or by a single sign-on (its password is the IdP's business). */
  origin: UserOrigin;
  /** An instance administrator (the setup user, and whoever the CLI or another administrator names). */
  admin: boolean;
  preferred_namespace: string | null;
  created_at: Date;
}

declare module '@gatehouse/core/hooks' {
  interface HookMap {
    /**
     * Runs on every sign-in after the credential check, before a token is issued: a handler that throws refuses the
     * sign-in with its error (the cloud refuses accounts whose e-mail address is not verified yet).
     */
    'user.signIn': { user: UserRow };
  }
}

/** `local`: made with a password; `saml`: made by a SAML sign-in (enterprise edition). */
export type UserOrigin = 'local' | 'saml';

export const userConflicts = { users_username_key: ['username'], users_email_key: ['email'] };

/**
 * Where a signed-out sign-in is announced to every instance (the id is the message): the web terminals opened
 * with it close.
 */
export const SIGN_IN_ENDED = 'users:sign-in-ended';

/**
 * Seconds a single sign-on counts as recent: an account made by SAML has no password its person knows, so a grave
 * act (deleting the account) asks it to sign in again through the identity provider first, and act within this.
 */
export const RECENT_SSO_SECONDS = 300;

/** A sign-in id as Gatehouse makes them: 16 random bytes, base64url. */
const SIGN_IN = /^[A-Za-z0-9_-]{22}$/;

/** A new sign-in: the tokens of one sign-in, and those it is switched or refreshed into, carry its id (`sid`). */
export function newSignIn(): string {
  return randomBytes(16).toString('base64url');
}

/** A 24-hex user id: 4 bytes of time then 8 random bytes (sortable). */
export function newUserId(): string {
  const time = Buffer.alloc(4);
  time.writeUInt32BE(Math.floor(Date.now() / 1000));
  return time.toString('hex') + randomBytes(8).toString('hex');
}

/** Users: creation, look-up by username or e-mail, and the authentication result of a sign-in. */
export class UserService {
  private readonly db: Knex;
  private readonly tokens: TokenService;
  private readonly config: Config;
  private readonly passwords: PasswordHashing;
  private readonly hooks: Hooks;
  private readonly cache: Cache;

  constructor(deps: {
    db: Knex;
    tokens: TokenService;
    config: Config;
    passwords: PasswordHashing;
    hooks: Hooks;
    cache: Cache;
  }) {
    this.db = deps.db;
    this.tokens = deps.tokens;
    this.config = deps.config;
    this.passwords = deps.passwords;
    this.hooks = deps.hooks;
    this.cache = deps.cache;
  }

  /** Users are no tenant's rows: the user model bound to this kernel's store, in `trx` when given. */
  private rows(trx?: Knex) {
    return User.bindKnex(this.db).query(trx === this.db ? undefined : trx);
  }

  async create(
    input: {
      name: string;
      username: string;
      email: string;
      password: string;
      maxNamespaces?: number;
      admin?: boolean;
      origin?: UserOrigin;
    },
    trx: Knex = this.db,
  ): Promise<UserRow> {
    const clash = await this.conflicts(input.username, input.email, undefined, trx);
    if (clash.length) throw new Conflict(clash);
    const row = {
      id: newUserId(),
      name: input.name,
      username: input.username,
      email: input.email.toLowerCase(),
      password_hash: await this.passwords.hash(input.password),
      max_namespaces: input.maxNamespaces ?? this.config.limits.maxNamespaces,
      admin: input.admin ?? false,
      origin: input.origin ?? 'local',
    };
    try {
      return await this.rows(trx).insert(row).returning('*');
    } catch (err) {
      throw fromDatabaseError(err, userConflicts);
    }
  }

  /** Field names among username and email that another user already holds. */
  async conflicts(
    username: string | undefined,
    email: string | undefined,
    exceptId?: string,
    trx: Knex = this.db,
  ) {
    const fields: string[] = [];
    if (username) {
      const q = this.rows(trx).whereRaw('lower(username) = lower(?)', [username]);
      if (exceptId) q.whereNot('id', exceptId);
      if (await q.select('id').first()) fields.push('username');
    }
    if (email) {
      const q = this.rows(trx).whereRaw('lower(email) = lower(?)', [email]);
      if (exceptId) q.whereNot('id', exceptId);
      if (await q.select('id').first()) fields.push('email');
    }
    return fields;
  }

  /** A user by username or e-mail (login takes either). */
  async findByLogin(identifier: string): Promise<UserRow | undefined> {
    return await this.rows()
      .whereRaw('lower(username) = lower(?)', [identifier])
      .orWhereRaw('lower(email) = lower(?)', [identifier])
      .first();
  }

  /**
   * The one check of a verified user token, for every entry point that takes one: the account exists and is not
   * disabled, the token was issued after the last password change (a change signs out every older token), its
   * sign-in was not signed out, and the role in the token's namespace is read fresh (a removed member loses access
   * at once). A token without a sign-in id (issued before sign-out existed) is refused: its sign-in could not end.
   */
  async callerFor(claims: TokenClaims): Promise<UserCaller> {
    if (claims.kind !== 'user') throw new Unauthorized();
    const signIn = claims.sid;
    if (typeof signIn !== 'string' || !SIGN_IN.test(signIn)) throw new Unauthorized();
    // One statement for every call a user makes: the account's state, whether the sign-in ended and the role in the
    // token's namespace (subqueries), and only the columns this check reads, not the password hash or the sealed
    // MFA secret. Only "no such user" is a 401: a store that cannot answer is a 503 (the console then keeps the
    // user in).
    const read = this.rows()
      .findById(claims.sub)
      .select(
        'id',
        'username',
        'status',
        'password_changed_at',
        'admin',
        raw('exists (select 1 from ?? where sign_in = ?) as signed_out', [EndedSignIn.tableName, signIn]),
      );
    if (claims.tenant) read.select(Member.acceptedRoleOf(this.db, claims.tenant, ref('users.id')).as('role'));
    const user = (await read) as CallerRow | undefined;
    if (!user || user.status === 'disabled' || user.signed_out) throw new Unauthorized();
    const changed = new Date(user.password_changed_at).getTime();
    if (typeof claims.pwd !== 'number' || claims.pwd < changed) throw new Unauthorized();
    const role = claims.tenant && isRole(user.role) ? user.role : undefined;
    return {
      kind: 'user',
      userId: user.id,
      username: user.username,
      tenantId: role ? claims.tenant : undefined,
      role,
      admin: user.admin,
      signIn,
    };
  }

  /**
   * Signs out: the sign-in ends, so every token that carries its id (this one, and those it was switched or
   * refreshed into) is refused from now on, by every instance, and the web terminals opened with it close. The
   * row is kept until the last such token would have expired.
   */
  async endSignIn(caller: Pick<UserCaller, 'signIn' | 'userId'>): Promise<void> {
    await EndedSignIn.bindKnex(this.db)
      .query()
      .insert({
        sign_in: caller.signIn,
        user_id: caller.userId,
        expires_at: new Date(Date.now() + this.config.auth.tokenTtl * 1000),
      })
      .onConflict('sign_in')
      .ignore();
    await this.cache.publish(SIGN_IN_ENDED, caller.signIn);
  }

  /** Notes that `signIn` was made through the identity provider just now (see RECENT_SSO_SECONDS). */
  async markSingleSignOn(signIn: string): Promise<void> {
    await this.cache.set(`sign-in:sso:${signIn}`, '1', RECENT_SSO_SECONDS);
  }

  /** Whether `signIn` was made through the identity provider within the last RECENT_SSO_SECONDS. */
  async recentSingleSignOn(signIn: string): Promise<boolean> {
    return (await this.cache.get(`sign-in:sso:${signIn}`)) !== null;
  }

  /** Forgets ended sign-ins whose tokens have all expired (a periodic job). */
  async forgetEndedSignIns(): Promise<void> {
    await EndedSignIn.bindKnex(this.db).query().where('expires_at', '<', new Date()).delete();
  }

  async get(id: string): Promise<UserRow> {
    const user = await this.rows().findById(id);
    if (!user) throw new NotFound('user');
    return user;
  }

  /** Whether any user exists. Inside a transaction pass it: the embedded store has a single connection. */
  async any(trx: Knex = this.db): Promise<boolean> {
    return Boolean(await this.rows(trx).select('id').first());
  }

  async setPassword(id: string, passwordHash: string): Promise<void> {
    // Tokens carry the password-change second they were issued after; moving it forward invalidates older tokens.
    const n = await this.rows()
      .findById(id)
      .patch({ password_hash: passwordHash, password_changed_at: new Date(), updated_at: new Date() });
    if (!n) throw new NotFound('user');
  }

  async touchLogin(id: string): Promise<void> {
    await this.rows().findById(id).patch({ last_login: new Date() });
  }

  /** Remembers the namespace a user switched to, so the next sign-in starts there. */
  async setPreferredNamespace(id: string, tenantId: string): Promise<void> {
    await this.rows().findById(id).patch({ preferred_namespace: tenantId });
  }

  /**
   * Updates the signed-in user's own record. Conflicting username or e-mail
   * answer 409 with those field names; the recovery e-mail must differ from the e-mail and cannot be cleared once
   * set; a new password needs the current one and signs out every older token, and an account made by single
   * sign-on has none to change (403).
   */
  async update(
    id: string,
    changes: {
      name?: string;
      username?: string;
      email?: string;
      recovery_email?: string;
      password?: string;
      current_password?: string;
    },
  ): Promise<UserRow> {
    const user = await this.get(id);
    const email = changes.email?.toLowerCase();
    const recovery = changes.recovery_email?.toLowerCase();
    const invalid: string[] = [];
    if (changes.recovery_email !== undefined) {
      if (recovery === '' && user.recovery_email) invalid.push('recovery_email');
      if (recovery && recovery === (email ?? user.email)) invalid.push('recovery_email');
    } else if (email && user.recovery_email && email === user.recovery_email) {
      invalid.push('email');
    }
    if (changes.password !== undefined && user.origin === 'saml') {
      throw new Forbidden(
        'this account signs in through its identity provider: its password is managed there, not in Gatehouse',
      );
    }
    if (changes.password !== undefined && !changes.current_password) invalid.push('current_password');
    if (invalid.length) throw new Invalid(invalid);
    const clash = await this.conflicts(
      changes.username !== user.username ? changes.username : undefined,
      email !== user.email ? email : undefined,
      id,
    );
    if (clash.length) throw new Conflict(clash);
    const row: Record<string, unknown> = { updated_at: new Date() };
    if (changes.name !== undefined) row.name = changes.name;
    if (changes.username !== undefined) row.username = changes.username;
    if (email !== undefined) row.email = email;
    if (recovery) row.recovery_email = recovery;
    if (changes.password !== undefined) {
      if (!(await this.passwords.verify(changes.current_password ?? '', user.password_hash, id))) {
        throw new Forbidden('the current password is wrong');
      }
      row.password_hash = await this.passwords.hash(changes.password, id);
      row.password_changed_at = new Date();
    }
    try {
      const [updated] = await this.rows().where({ id }).patch(row).returning('*');
      return updated as UserRow;
    } catch (err) {
      throw fromDatabaseError(err, userConflicts);
    }
  }

  /** The namespace a session starts in: the preferred one if still a member, else the oldest membership. */
  async defaultMembership(userId: string): Promise<{ tenant_id: string; role: Role } | undefined> {
    const user = await this.get(userId);
    // A user's memberships span namespaces by design.
    const rows = await Member.acrossTenants(this.db)
      .where({ user_id: userId, status: 'accepted' })
      .orderBy('added_at', 'asc')
      .select('tenant_id', 'role');
    const pick = rows.find((r) => r.tenant_id === user.preferred_namespace) ?? rows[0];
    return pick && isRole(pick.role) ? { tenant_id: pick.tenant_id, role: pick.role } : undefined;
  }

  membership(userId: string, tenantId: string): Promise<Role | undefined> {
    return Member.acceptedRole(this.db, tenantId, userId);
  }

  /**
   * Signs a user token scoped to `tenantId` and builds the authentication result of a sign-in. A token of
   * the caller's own sign-in (a namespace switch, a refresh) passes its `signIn`; without one it is a new sign-in.
   */
  async authResult(user: UserRow, tenantId?: string, signIn: string = newSignIn()) {
    // Every sign-in path ends here, after its credential check: a disabled account gets no token.
    if (user.status === 'disabled') throw new Forbidden('this account is disabled');
    await this.hooks.run('user.signIn', { user });
    const member = tenantId
      ? { tenant_id: tenantId, role: await this.membership(user.id, tenantId) }
      : await this.defaultMembership(user.id);
    const tenant = member?.role ? member.tenant_id : undefined;
    const token = await this.tokens.sign({
      kind: 'user',
      sub: user.id,
      ...(tenant ? { tenant } : {}),
      pwd: new Date(user.password_changed_at).getTime(),
      sid: signIn,
    });
    return {
      token,
      id: user.id,
      origin: user.origin ?? 'local',
      user: user.username,
      name: user.name,
      email: user.email,
      recovery_email: user.recovery_email ?? '',
      tenant: tenant ?? '',
      role: member?.role ?? '',
      mfa: user.mfa_enabled,
      max_namespaces: user.max_namespaces,
      admin: user.admin,
    };
  }
}
