import { randomBytes } from 'node:crypto';
import {
  type Caller,
  type Config,
  Conflict,
  Forbidden,
  fromDatabaseError,
  htmlText,
  Invalid,
  isRole,
  type Mailer,
  type MemberInvite,
  NotFound,
  type Role,
  roleAtLeast,
  ServiceUnavailable,
  TenantStore,
} from '@gatehouse/core';
import {
  digest,
  Member,
  type MemberService,
  type NamespaceService,
  newUserId,
  User,
  type UserRow,
} from '@gatehouse/plugin-community';
import type { Knex } from 'knex';
import type { MailLimit } from '../accounts/mail-limit';
import type { Outbox } from '../accounts/outbox';
import { Invitation } from './model';
import type { InviteView } from './schemas';

/** An invitation is valid for 7 days. */
export const INVITE_DAYS = 7;

type InviteRow = Invitation;

/**
 * E-mailed invitations of the cloud: the member stays pending, without access, until the
 * invitee accepts with the link's signature; the link is valid 7 days, and inviting again after that resends it. An
 * address without an account is invited too: the link leads to sign-up, and signing up with it joins the namespace.
 */
export class InvitationService {
  private readonly db: Knex;
  private readonly config: Config;
  private readonly mailer: Mailer;
  private readonly members: MemberService;
  private readonly namespaces: NamespaceService;
  private readonly outbox: Outbox;
  private readonly mailLimit: MailLimit;

  constructor(deps: {
    db: Knex;
    config: Config;
    mailer: Mailer;
    members: MemberService;
    namespaces: NamespaceService;
    outbox: Outbox;
    mailLimit: MailLimit;
  }) {
    this.db = deps.db;
    this.config = deps.config;
    this.mailer = deps.mailer;
    this.members = deps.members;
    this.namespaces = deps.namespaces;
    this.outbox = deps.outbox;
    this.mailLimit = deps.mailLimit;
  }

  /** Accounts are no tenant's rows. */
  private userRows(trx?: Knex.Transaction) {
    return User.bindKnex(this.db).query(trx);
  }

  /** The account with this address (case-insensitive), if any. */
  private accountOf(email: string, trx?: Knex.Transaction) {
    return this.userRows(trx).whereRaw('lower(email) = lower(?)', [email]).select('id').first();
  }

  /**
   * Invitations are found by their signature's digest, unique across the installation: the row names the
   * namespace, whose store then does the rest.
   */
  private byDigest(d: string, trx?: Knex.Transaction) {
    return Invitation.acrossTenants(this.db, trx).where({ digest: d }).first();
  }

  private needMail(): void {
    if (!this.mailer.configured)
      throw new ServiceUnavailable('outgoing e-mail is not configured (GATEHOUSE_SMTP_URL)');
  }

  /** The link of the console's accept-invite page (it leads on to sign-up when the address has no account). */
  link(tenantId: string, id: string, sig: string): string {
    const query = new URLSearchParams({ 'tenant-id': tenantId, 'user-id': id, sig });
    return `${this.config.publicUrl}/accept-invite?${query}`;
  }

  /**
   * `POST /api/namespaces/{tenant}/members/invites`: invites `email` with `role` and answers the link it mailed.
   * A pending invitation still valid is a 409; an expired one, or one already used, is replaced.
   */
  async invite(caller: Caller, tenantId: string, email: string, role: Role): Promise<{ link: string }> {
    if (caller.kind !== 'user') throw new Forbidden('this call needs a user token');
    this.needMail();
    const { role: mine, tenant } = await this.namespaces.storeFor(caller, tenantId, 'administrator');
    if (role === 'owner' || !roleAtLeast(mine, role))
      throw new Forbidden('you cannot grant a role above your own');
    await this.mailLimit.take('invite', caller.userId, `${tenantId}:${email}`);
    await this.clearStale(tenant, email);
    const live = await tenant
      .query(Invitation)
      .whereRaw('lower(email) = lower(?)', [email])
      .select('id')
      .first();
    if (live) throw new Conflict(['email']);
    const user = await this.accountOf(email);
    if (user) {
      // Through core's member call, so its checks apply and its `member.invite` hook (below) keeps it pending.
      const handled = await this.members.add(caller, tenantId, email, role);
      if (!handled.link) throw new Error('member.invite did not make an invitation');
      return { link: handled.link };
    }
    const ns = await this.namespaces.get(tenantId);
    // The member id the invitee is known by until an account has the address.
    const id = newUserId();
    const sig = await this.store(tenant, {
      id,
      email: email.toLowerCase(),
      role,
      invitedBy: caller.userId,
    });
    const link = this.link(tenantId, id, sig);
    this.mail(email, ns.name, role, caller.username, link, false);
    return { link };
  }

  /**
   * The `member.invite` handler: an invited account becomes a pending member, and is mailed the link. Core's member
   * call runs it, from the cloud invite above or from `POST /api/namespaces/{tenant}/members`.
   */
  async pending(invite: MemberInvite): Promise<void> {
    this.needMail();
    const expiresAt = new Date(Date.now() + INVITE_DAYS * 86_400_000);
    // Core's member call runs this hook once it has checked the inviter's role in the namespace.
    const sig = await this.store(new TenantStore(this.db, invite.tenantId), {
      id: invite.userId,
      email: invite.email.toLowerCase(),
      role: invite.role,
      invitedBy: invite.invitedBy,
      expiresAt,
    });
    invite.status = 'pending';
    invite.expiresAt = expiresAt;
    invite.link = this.link(invite.tenantId, invite.userId, sig);
    const inviter = await this.userRows().findById(invite.invitedBy).select('username');
    this.mail(invite.email, invite.namespace, invite.role, inviter?.username ?? 'someone', invite.link, true);
  }

  /**
   * Stores a new invitation and answers its signature. An expired or accepted one of the address gives way; a valid
   * one stays and this one is 409 ["email"]: the unique index on the address decides between invitations sent at
   * once, so exactly one of them is stored and mailed.
   */
  private async store(
    namespace: TenantStore,
    i: { id: string; email: string; role: Role; invitedBy: string; expiresAt?: Date },
  ): Promise<string> {
    const sig = randomBytes(32).toString('base64url');
    try {
      await namespace.transaction(async (tenant) => {
        await tenant
          .query(Invitation)
          .whereRaw('lower(email) = lower(?)', [i.email])
          .where((q) => q.where('expires_at', '<=', new Date()).orWhereNotNull('accepted_at'))
          .delete();
        await tenant.query(Invitation).insert({
          id: i.id,
          email: i.email,
          role: i.role,
          invited_by: i.invitedBy,
          digest: digest(sig),
          expires_at: i.expiresAt ?? new Date(Date.now() + INVITE_DAYS * 86_400_000),
        });
      });
    } catch (err) {
      // Its id is the invitee's user id where the address has an account: two at once meet on the key too.
      throw fromDatabaseError(err, { member_invites_email_key: ['email'], member_invites_pkey: ['email'] });
    }
    return sig;
  }

  /** Expired invitations of this address give way to a new one, with their pending membership. */
  private async clearStale(namespace: TenantStore, email: string): Promise<void> {
    await namespace.transaction(async (tenant) => {
      const stale = await tenant
        .query(Invitation)
        .whereRaw('lower(email) = lower(?)', [email])
        .where((q) => q.where('expires_at', '<=', new Date()).orWhereNotNull('accepted_at'))
        .select('id');
      if (!stale.length) return;
      await tenant
        .query(Member)
        .where({ status: 'pending' })
        .whereIn(
          'user_id',
          stale.map((s) => s.id),
        )
        .delete();
      await tenant
        .query(Invitation)
        .whereIn(
          'id',
          stale.map((s) => s.id),
        )
        .delete();
    });
  }

  private mail(
    to: string,
    namespace: string,
    role: Role,
    inviter: string,
    link: string,
    account: boolean,
  ): void {
    const next = account
      ? 'Open the link, sign in if asked, and accept.'
      : 'Open the link to create your Gatehouse account; signing up with it joins the namespace.';
    this.outbox.post(
      {
        to,
        subject: `Gatehouse: ${inviter} invited you to the namespace ${namespace}`,
        text: `${inviter} invited you to the namespace ${namespace} on Gatehouse, as ${role}.\n\n${next}\n\n${link}\n\nThe invitation is valid for ${INVITE_DAYS} days.\n`,
        html: `<p><b>${htmlText(inviter)}</b> invited you to the namespace <b>${htmlText(namespace)}</b> on Gatehouse, as ${htmlText(role)}.</p><p>${htmlText(next)}</p><p><a href="${htmlText(link)}">${htmlText(link)}</a></p><p>The invitation is valid for ${INVITE_DAYS} days.</p>`,
      },
      'invitation',
    );
  }

  private async view(row: InviteRow): Promise<InviteView> {
    const ns = await this.namespaces.get(row.tenant_id);
    const account = await this.accountOf(row.email);
    return {
      id: row.id,
      tenant_id: row.tenant_id,
      namespace: ns.name,
      email: row.email,
      role: isRole(row.role) ? row.role : 'observer',
      status: row.accepted_at ? 'accepted' : new Date(row.expires_at) <= new Date() ? 'expired' : 'pending',
      expires_at: new Date(row.expires_at).toISOString(),
      account: Boolean(account),
    };
  }

  /** `GET .../members/{id}/accept-invite?sig=`: the invitation the link names; 404 unless the signature is its own. */
  async status(tenantId: string, id: string, sig: string): Promise<InviteView> {
    const row = await this.byDigest(digest(sig));
    if (!row || row.tenant_id !== tenantId || row.id !== id) throw new NotFound('invitation');
    return this.view(row);
  }

  /** The pending and expired invitations of a namespace, for its administrators (the Members screen). */
  async list(caller: Caller, tenantId: string): Promise<InviteView[]> {
    const { tenant } = await this.namespaces.storeFor(caller, tenantId, 'administrator');
    const rows = await tenant.query(Invitation).whereNull('accepted_at').orderBy('created_at', 'desc');
    return Promise.all(rows.map((r) => this.view(r)));
  }

  /** Withdraws an invitation that was not accepted, with its pending membership. */
  async cancel(caller: Caller, tenantId: string, id: string): Promise<void> {
    const { tenant: namespace } = await this.namespaces.storeFor(caller, tenantId, 'administrator');
    await namespace.transaction(async (tenant) => {
      const n = await tenant.query(Invitation).where({ id }).whereNull('accepted_at').delete();
      if (!n) throw new NotFound('invitation');
      await tenant.query(Member).where({ user_id: id, status: 'pending' }).delete();
    });
  }

  /**
   * `PATCH .../members/accept-invite`: the signed-in invitee joins. The signature is single-use and must be for this
   * namespace and the caller's own address.
   */
  async accept(caller: Caller, tenantId: string, sig: string): Promise<void> {
    if (caller.kind !== 'user') throw new Forbidden('this call needs a user token');
    await this.db.transaction(async (trx) => {
      const row = await this.byDigest(digest(sig), trx).forUpdate();
      if (!row || row.tenant_id !== tenantId) throw new NotFound('invitation');
      const me = await this.userRows(trx).findById(caller.userId);
      if (!me || me.email.toLowerCase() !== row.email.toLowerCase())
        throw new Forbidden('this invitation was sent to another e-mail address; sign in with that account');
      await this.join(trx, row, me.id);
    });
  }

  /** Signing up with an invitation's signature (`POST /api/register` with `sig`): the new account joins. */
  async claim(sig: string, user: UserRow, trx: Knex.Transaction): Promise<void> {
    const row = await this.byDigest(digest(sig), trx).forUpdate();
    if (!row) throw new Invalid(['sig'], 'this invitation link is not valid');
    if (row.email.toLowerCase() !== user.email.toLowerCase()) {
      throw new Forbidden('this invitation was sent to another e-mail address; sign up with that address');
    }
    await this.join(trx, row, user.id);
  }

  private async join(trx: Knex.Transaction, row: InviteRow, userId: string): Promise<void> {
    if (row.accepted_at) throw new Conflict(['sig'], 'this invitation was already accepted');
    if (new Date(row.expires_at) <= new Date())
      throw new Forbidden('this invitation has expired; ask for a new one');
    const role = isRole(row.role) ? row.role : 'observer';
    // The invitation, found by its signature, establishes the namespace.
    const tenant = new TenantStore(this.db, row.tenant_id, trx);
    await tenant
      .query(Member)
      .insert({ user_id: userId, role, status: 'accepted', expires_at: null })
      .onConflict(['tenant_id', 'user_id'])
      .merge({ status: 'accepted', expires_at: null });
    await tenant.query(Invitation).where({ id: row.id }).patch({ accepted_at: new Date() });
  }
}
