import {
  type Caller,
  Conflict,
  Forbidden,
  fromDatabaseError,
  type Hooks,
  HttpError,
  type MemberInvite,
  NotFound,
  type Role,
  roleAtLeast,
} from '@gatehouse/core';
import type { Knex } from 'knex';
import type { NamespaceService } from '../namespaces/service';
import { User } from '../users/model';
import type { UserService } from '../users/service';
import { Member } from './model';

/**
 * Members and roles. Nobody grants a role above their own or touches the owner; the
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

  /** Adds a member (or, where a `member.invite` handler says so, invites one); answers the invite as handled. */
  async add(caller: Caller, tenantId: string, email: string, role: Role): Promise<MemberInvite> {
    const me = this.me(caller);
    const { role: mine, tenant } = await this.namespaces.storeFor(caller, tenantId, 'administrator');
    if (role === 'owner' || !roleAtLeast(mine, role))
      throw new Forbidden('you cannot grant a role above your own');
    const ns = await this.namespaces.get(tenantId);
    const user = await User.bindKnex(this.db)
      .query()
      .whereRaw('lower(email) = lower(?)', [email])
      .select('id', 'email')
      .first();
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
    if (await tenant.query(Member).where({ user_id: user.id }).select('role').first()) {
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
      await tenant.query(Member).insert({
        user_id: user.id,
        role,
        status: invite.status,
        expires_at: invite.expiresAt ?? null,
      });
    } catch (err) {
      throw fromDatabaseError(err, { namespace_members_pkey: ['email'] });
    }
    return invite;
  }

  /** The member `userId` of `tenantId` that `caller` may act on: not the owner, not above the caller's role. */
  private async target(caller: Caller, tenantId: string, userId: string) {
    const me = this.me(caller);
    const { role: mine, tenant } = await this.namespaces.storeFor(caller, tenantId, 'administrator');
    const row = await tenant.query(Member).where({ user_id: userId }).select('role').first();
    if (!row) throw new NotFound('member');
    if (userId === me.userId) throw new Forbidden('you cannot change your own membership');
    if (row.role === 'owner') throw new Forbidden('the owner cannot be changed or removed');
    if (!roleAtLeast(mine, row.role)) throw new Forbidden('this member has a role above yours');
    return { mine, tenant };
  }

  async changeRole(caller: Caller, tenantId: string, userId: string, role: Role): Promise<void> {
    const { mine, tenant } = await this.target(caller, tenantId, userId);
    if (role === 'owner' || !roleAtLeast(mine, role))
      throw new Forbidden('you cannot grant a role above your own');
    await tenant.query(Member).where({ user_id: userId }).patch({ role });
  }

  async remove(caller: Caller, tenantId: string, userId: string): Promise<void> {
    const { tenant } = await this.target(caller, tenantId, userId);
    await tenant.query(Member).where({ user_id: userId }).delete();
  }

  /** Leaves a namespace and returns a new authentication that no longer includes it. */
  async leave(caller: Caller, tenantId: string) {
    if (caller.kind === 'apiKey') {
      // A key belongs to the namespace, not to a member: there is no membership for it to give up.
      throw new Forbidden('an API key is not a member of its namespace; delete the key instead');
    }
    const me = this.me(caller);
    const { role, tenant } = await this.namespaces.storeFor(caller, tenantId);
    if (role === 'owner') throw new Forbidden('the owner cannot leave; delete the namespace instead');
    await tenant.query(Member).where({ user_id: me.userId }).delete();
    return this.users.authResult(await this.users.get(me.userId), undefined, me.signIn);
  }
}
