import {
  type Caller,
  Conflict,
  Forbidden,
  fromDatabaseError,
  type Hooks,
  HttpError,
  NotFound,
  type Role,
  roleAtLeast,
} from '@gatehouse/core';
import type { Knex } from 'knex';
import type { NamespaceService } from '../namespaces/service';
import type { UserService } from '../users/service';

/**
 * What `member.invite` handlers see. Community adds the member at once (`status` stays `accepted`); an edition that
 * confirms invites by e-mail sets `status` to `pending` and sends its message (SPEC.md section 4).
 */
export interface MemberInvite {
  tenantId: string;
  namespace: string;
  invitedBy: string;
  userId: string;
  email: string;
  role: Role;
  status: 'accepted' | 'pending';
  /** Set by a handler that makes the invite expire (cloud: 7 days). */
  expiresAt?: Date;
}

declare module '@gatehouse/core/hooks' {
  interface HookMap {
    'member.invite': MemberInvite;
  }
}

/**
 * Members and roles (SPEC.md sections 4 and 6). Nobody grants a role above their own or touches the owner; the
 * owner cannot leave and must delete the namespace instead.
 */
export class MemberService {
  private readonly db: Knex;
  private readonly hooks: Hooks;
  private readonly namespaces: NamespaceService;
  private readonly users: UserService;

  constructor(deps: { db: Knex; hooks: Hooks; namespaces: NamespaceService; users: UserService }) {
    this.db = deps.db;
    this.hooks = deps.hooks;
    this.namespaces = deps.namespaces;
    this.users = deps.users;
  }

  private me(caller: Caller) {
    if (caller.kind !== 'user') throw new Forbidden('this call needs a user token');
    return caller;
  }

  async add(caller: Caller, tenantId: string, email: string, role: Role): Promise<void> {
    const me = this.me(caller);
    const mine = await this.namespaces.roleIn(caller, tenantId, 'administrator');
    if (role === 'owner' || !roleAtLeast(mine, role))
      throw new Forbidden('you cannot grant a role above your own');
    const ns = await this.namespaces.get(tenantId);
    const user = await this.db('users').whereRaw('lower(email) = lower(?)', [email]).first('id', 'email');
    if (!user) {
      // Community adds existing accounts only (no sign-up, no e-mailed invitations): say what to do instead.
      throw new HttpError(
        404,
        'no Gatehouse account has this e-mail address: the person needs an account first, which an instance ' +
          'administrator creates on the server with `gatehouse user create --username <username> --email ' +
          '<email> --password <password>`; then add them again',
        { code: 'account_needed' },
      );
    }
    if (await this.db('namespace_members').where({ tenant_id: tenantId, user_id: user.id }).first('role')) {
      throw new Conflict(['email']);
    }
    const invite: MemberInvite = {
      tenantId,
      namespace: ns.name,
      invitedBy: me.userId,
      userId: user.id,
      email: user.email,
      role,
      status: 'accepted',
    };
    await this.hooks.run('member.invite', invite);
    try {
      await this.db('namespace_members').insert({
        tenant_id: tenantId,
        user_id: user.id,
        role,
        status: invite.status,
        expires_at: invite.expiresAt ?? null,
      });
    } catch (err) {
      throw fromDatabaseError(err, { namespace_members_pkey: ['email'] });
    }
  }

  /** The member `userId` of `tenantId` that `caller` may act on: not the owner, not above the caller's role. */
  private async target(caller: Caller, tenantId: string, userId: string) {
    const me = this.me(caller);
    const mine = await this.namespaces.roleIn(caller, tenantId, 'administrator');
    const row = await this.db('namespace_members')
      .where({ tenant_id: tenantId, user_id: userId })
      .first('role');
    if (!row) throw new NotFound('member');
    if (userId === me.userId) throw new Forbidden('you cannot change your own membership');
    if (row.role === 'owner') throw new Forbidden('the owner cannot be changed or removed');
    if (!roleAtLeast(mine, row.role)) throw new Forbidden('this member has a role above yours');
    return mine;
  }

  async changeRole(caller: Caller, tenantId: string, userId: string, role: Role): Promise<void> {
    const mine = await this.target(caller, tenantId, userId);
    if (role === 'owner' || !roleAtLeast(mine, role))
      throw new Forbidden('you cannot grant a role above your own');
    await this.db('namespace_members').where({ tenant_id: tenantId, user_id: userId }).update({ role });
  }

  async remove(caller: Caller, tenantId: string, userId: string): Promise<void> {
    await this.target(caller, tenantId, userId);
    await this.db('namespace_members').where({ tenant_id: tenantId, user_id: userId }).delete();
  }

  /** Leaves a namespace and returns a new authentication that no longer includes it. */
  async leave(caller: Caller, tenantId: string) {
    if (caller.kind === 'apiKey') {
      // A key belongs to the namespace, not to a member: there is no membership for it to give up.
      throw new Forbidden('an API key is not a member of its namespace; delete the key instead');
    }
    const me = this.me(caller);
    const role = await this.namespaces.roleIn(caller, tenantId);
    if (role === 'owner') throw new Forbidden('the owner cannot leave; delete the namespace instead');
    await this.db('namespace_members').where({ tenant_id: tenantId, user_id: me.userId }).delete();
    return this.users.authResult(await this.users.get(me.userId));
  }
}
