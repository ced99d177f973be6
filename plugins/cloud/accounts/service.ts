import {
  type Config,
  Conflict,
  Forbidden,
  type Hooks,
  HttpError,
  htmlText,
  Invalid,
  type Mailer,
  type PasswordHashing,
  ServiceUnavailable,
  type UserCaller,
} from '@gatehouse/core';
import {
  type Lockout,
  lockedOut,
  Member,
  type MfaService,
  Namespace,
  type NamespaceService,
  User,
  type UserRow,
  type UserService,
} from '@gatehouse/plugin-community';
import type { Knex } from 'knex';
import { raw } from 'objection';
import { BillingSubscription } from '../billing/model';
import type { InvitationService } from '../invitations/service';
import type { MailLimit } from './mail-limit';
import type { Outbox } from './outbox';
import type { DeletionPreview } from './schemas';
import { type AccountTokens, TOKEN_SECONDS } from './tokens';

declare module '@gatehouse/core/hooks' {
  interface HookMap {
    /**
     * Runs inside the deleting transaction before an account and the namespaces it owns go (`DELETE /api/user`). A
     * handler that throws keeps the account (billing refuses while a subscription is not settled).
     */
    'account.beforeDelete': { userId: string; tenantIds: string[]; trx: Knex.Transaction };
  }
}

/** The status of an account whose e-mail address is not verified yet; it cannot sign in. */
export const UNVERIFIED = 'unconfirmed';

export interface Registration {
  name: string;
  email: string;
  username: string;
  password: string;
  email_marketing?: boolean;
  sig?: string;
}

export interface DeletionInput {
  /** The tenant ids of the namespaces the caller owns, as the preview listed them: what the caller agrees goes. */
  namespaces: string[];
  password?: string;
  code?: string;
}

/**
 * Cloud accounts: sign-up with e-mail verification, password recovery by mail, and deleting one's own
 * account. Calls that name an account by username or e-mail answer alike whether or not it exists.
 */
export class AccountService {
  private readonly db: Knex;
  private readonly config: Config;
  private readonly hooks: Hooks;
  private readonly mailer: Mailer;
  private readonly users: UserService;
  private readonly passwords: PasswordHashing;
  private readonly accountTokens: AccountTokens;
  private readonly outbox: Outbox;
  private readonly mailLimit: MailLimit;
  private readonly invitations: InvitationService;
  private readonly lockout: Lockout;
  private readonly mfa: MfaService;
  private readonly namespaces: NamespaceService;

  constructor(deps: {
    db: Knex;
    config: Config;
    hooks: Hooks;
    mailer: Mailer;
    users: UserService;
    passwords: PasswordHashing;
    accountTokens: AccountTokens;
    outbox: Outbox;
    mailLimit: MailLimit;
    invitations: InvitationService;
    lockout: Lockout;
    mfa: MfaService;
    namespaces: NamespaceService;
  }) {
    this.db = deps.db;
    this.config = deps.config;
    this.hooks = deps.hooks;
    this.mailer = deps.mailer;
    this.users = deps.users;
    this.passwords = deps.passwords;
    this.accountTokens = deps.accountTokens;
    this.outbox = deps.outbox;
    this.mailLimit = deps.mailLimit;
    this.invitations = deps.invitations;
    this.lockout = deps.lockout;
    this.mfa = deps.mfa;
    this.namespaces = deps.namespaces;
  }

  /** Accounts are no tenant's rows: the user model, bound to this kernel's store. */
  private userRows(trx?: Knex.Transaction) {
    return User.bindKnex(this.db).query(trx);
  }

  /** Without outgoing mail no account can be verified or recovered: the same 503 for everyone. */
  private needMail(): void {
    if (!this.mailer.configured)
      throw new ServiceUnavailable('outgoing e-mail is not configured (GATEHOUSE_SMTP_URL)');
  }

  /**
   * Creates an account. Without `sig` it cannot sign in until its address is verified through the mailed link; with
   * the `sig` of an invitation to the same address, the address is proven, and the account joins that namespace.
   */
  async register(input: Registration, source: string): Promise<void> {
    this.needMail();
    await this.mailLimit.take('register', source, input.email);
    const { user, token } = await this.db.transaction(async (trx) => {
      await this.releaseUnverified(input.username, input.email, trx);
      const user = await this.users.create(
        {
          name: input.name,
          username: input.username,
          email: input.email,
          password: input.password,
          maxNamespaces: this.config.limits.maxNamespaces,
        },
        trx,
      );
      await this.userRows(trx)
        .findById(user.id)
        .patch({
          email_marketing: input.email_marketing ?? false,
          status: input.sig ? 'confirmed' : UNVERIFIED,
        });
      if (input.sig) {
        await this.invitations.claim(input.sig, user, trx);
        return { user, token: undefined };
      }
      return { user, token: await this.accountTokens.issue(user.id, 'verify', trx) };
    });
    if (token) this.mailVerification(user, token);
  }

  /**
   * An account nobody verified within the verification window holds neither its e-mail address nor its username:
   * anyone could sign up with someone else's address and never verify it. A sign-up that names either takes them,
   * and the stale account (which never could sign in) goes; the real owner's verification then wins. The window
   * counts from the sign-up, so asking for the link again does not extend the hold.
   */
  private async releaseUnverified(username: string, email: string, trx: Knex.Transaction): Promise<void> {
    await this.userRows(trx)
      .where({ status: UNVERIFIED })
      .where('created_at', '<', new Date(Date.now() - TOKEN_SECONDS.verify * 1000))
      .where((q) =>
        q.whereRaw('lower(username) = lower(?)', [username]).orWhereRaw('lower(email) = lower(?)', [email]),
      )
      .delete();
  }

  private mailVerification(user: UserRow, token: string): void {
    const link = `${this.config.publicUrl}/validation_account?${new URLSearchParams({ email: user.email, token })}`;
    this.outbox.post(
      {
        to: user.email,
        subject: 'Gatehouse: confirm your e-mail address',
        text: `Welcome to Gatehouse, ${user.name}.\n\nConfirm your e-mail address to start using your account ${user.username}:\n\n${link}\n\nThe link works once, within 24 hours. If you did not sign up, ignore this message.\n`,
        html: `<p>Welcome to Gatehouse, ${htmlText(user.name)}.</p><p>Confirm your e-mail address to start using your account <b>${htmlText(user.username)}</b>:</p><p><a href="${htmlText(link)}">${htmlText(link)}</a></p><p>The link works once, within 24 hours. If you did not sign up, ignore this message.</p>`,
      },
      'verification',
    );
  }

  /** Verifies an address with the mailed token. Any failure is the same 400 naming `token`. */
  async verify(email: string, token: string): Promise<void> {
    const user = await this.userRows().whereRaw('lower(email) = lower(?)', [email]).first();
    const ok = await this.db.transaction(async (trx) => {
      if (!user || user.status !== UNVERIFIED) return false;
      if (!(await this.accountTokens.consume(user.id, 'verify', token, trx))) return false;
      await this.userRows(trx).findById(user.id).patch({ status: 'confirmed', updated_at: new Date() });
      return true;
    });
    if (!ok) throw new Invalid(['token'], 'this link is not valid or has expired; ask for a new one');
  }

  /** Mails a new verification link when the account exists and is not verified yet; answers alike otherwise. */
  async resendVerification(identifier: string, source: string): Promise<void> {
    this.needMail();
    await this.mailLimit.take('resend', source, identifier);
    const user = await this.users.findByLogin(identifier);
    if (!user || user.status !== UNVERIFIED) return;
    this.mailVerification(user, await this.accountTokens.issue(user.id, 'verify'));
  }

  /** Mails a link to choose a new password when the account exists; answers alike otherwise. */
  async recoverPassword(identifier: string, source: string): Promise<void> {
    this.needMail();
    await this.mailLimit.take('recover', source, identifier);
    const user = await this.users.findByLogin(identifier);
    if (!user || user.status === 'disabled') return;
    const token = await this.accountTokens.issue(user.id, 'recover');
    const link = `${this.config.publicUrl}/reset-password?${new URLSearchParams({ uid: user.id, token })}`;
    this.outbox.post(
      {
        to: user.email,
        subject: 'Gatehouse: choose a new password',
        text: `Someone asked to reset the password of ${user.username}. Choose a new one at:\n\n${link}\n\nThe link works once, within an hour. If this was not you, ignore this message; your password stays as it is.\n`,
        html: `<p>Someone asked to reset the password of <b>${htmlText(user.username)}</b>. Choose a new one at:</p><p><a href="${htmlText(link)}">${htmlText(link)}</a></p><p>The link works once, within an hour. If this was not you, ignore this message; your password stays as it is.</p>`,
      },
      'password recovery',
    );
  }

  /**
   * Sets a new password with the mailed token; every older sign-in ends. The token proves the address, so an
   * account not verified yet is verified too. Any failure is the same 400 naming `token`.
   */
  async updatePassword(userId: string, token: string, password: string, source: string): Promise<void> {
    const ok = await this.db.transaction(async (trx) => {
      // The token first: a guess costs no password hash. A hash refused (429) rolls the token back.
      if (!(await this.accountTokens.consume(userId, 'recover', token, trx))) return false;
      await this.userRows(trx)
        .findById(userId)
        .patch({
          password_hash: await this.passwords.hash(password, source),
          password_changed_at: new Date(),
          updated_at: new Date(),
          status: raw("case when status = ? then 'confirmed' else status end", [UNVERIFIED]),
        });
      return true;
    });
    if (!ok) throw new Invalid(['token'], 'this link is not valid or has expired; ask for a new one');
  }

  /** `GET /api/user/deletion`: what deleting the caller's account would take with it, and what it asks for. */
  async deletionPreview(caller: UserCaller): Promise<DeletionPreview> {
    const user = await this.users.get(caller.userId);
    const owned = await Namespace.bindKnex(this.db).query().where({ owner: user.id }).orderBy('name');
    const subscriptions = new Map(
      (
        await BillingSubscription.acrossTenants(this.db)
          .whereIn(
            'tenant_id',
            owned.map((n) => n.tenant_id),
          )
          .select('tenant_id', 'status')
      ).map((s) => [s.tenant_id, s.status]),
    );
    const namespaces = await Promise.all(
      owned.map(async (ns) => {
        const view = await this.namespaces.view(ns);
        return {
          tenant_id: ns.tenant_id,
          name: ns.name,
          devices: view.device_count,
          members: view.members.filter((m) => m.id !== user.id).length,
          subscription: subscriptions.get(ns.tenant_id) ?? 'inactive',
        };
      }),
    );
    // Memberships span namespaces by design: those of namespaces the account does not own.
    const memberships = (await Member.acrossTenants(this.db)
      .join('namespaces', 'namespaces.tenant_id', 'namespace_members.tenant_id')
      .where('namespace_members.user_id', user.id)
      .whereNot('namespaces.owner', user.id)
      .orderBy('namespaces.name')
      .select('namespaces.tenant_id', 'namespaces.name', 'namespace_members.role')) as unknown as {
      tenant_id: string;
      name: string;
      role: string;
    }[];
    return {
      namespaces,
      memberships: memberships.map((m) => ({ tenant_id: m.tenant_id, name: m.name, role: m.role })),
      confirm: {
        password: !(await this.users.recentSingleSignOn(caller.signIn)),
        code: user.mfa_enabled,
      },
    };
  }

  /**
   * Deletes the caller's account and the namespaces it owns, with everything in them; its memberships elsewhere go
   * too. The caller proves it is the person (the password, or a single sign-on within the last 5 minutes; and a
   * current code when two-step verification is on) and names the namespaces it owns, which must be exactly those
   * that go (409 naming `namespaces` otherwise: one was made or given away since the preview). Wrong passwords
   * count towards the lockout of the source and the account, as at sign-in. `account.beforeDelete` and each
   * namespace's `namespace.beforeDelete` run first, in the same transaction.
   */
  async deleteAccount(caller: UserCaller, input: DeletionInput, source: string): Promise<void> {
    const userId = caller.userId;
    await this.confirmPerson(caller, await this.users.get(userId), input, source);
    await this.db.transaction(async (trx) => {
      const user = await this.userRows(trx).findById(userId).forUpdate();
      if (!user) throw new HttpError(404, 'user not found');
      if (user.admin) {
        const others = await this.userRows(trx)
          .where({ admin: true })
          .whereNot({ id: userId })
          .whereNot({ status: 'disabled' })
          .select('id')
          .first();
        if (!others)
          throw new Forbidden(
            'the last instance administrator cannot delete their account; name another first',
          );
      }
      const owned = await Namespace.bindKnex(this.db)
        .query(trx)
        .where({ owner: userId })
        .forUpdate()
        .select('tenant_id');
      const tenantIds = owned.map((n) => n.tenant_id);
      const named = new Set(input.namespaces);
      if (named.size !== tenantIds.length || tenantIds.some((t) => !named.has(t))) {
        throw new Conflict(
          ['namespaces'],
          'name exactly the namespaces you own, which go with the account (GET /api/user/deletion lists them)',
        );
      }
      await this.hooks.run('account.beforeDelete', { userId, tenantIds, trx });
      for (const tenantId of tenantIds) {
        await this.hooks.run('namespace.beforeDelete', { tenantId, trx });
        await Namespace.bindKnex(this.db).query(trx).deleteById(tenantId);
      }
      await this.userRows(trx).deleteById(userId);
    });
  }

  /** The proof of the person behind the token, before an account goes (see deleteAccount). */
  private async confirmPerson(
    caller: UserCaller,
    user: UserRow,
    input: DeletionInput,
    source: string,
  ): Promise<void> {
    if (input.password !== undefined) {
      const guess = await this.lockout.guess('account-delete', source, user.id, () =>
        this.passwords.verify(input.password ?? '', user.password_hash, source),
      );
      if (guess.lockedUntil) throw lockedOut(guess.lockedUntil);
      if (!guess.ok) throw new Forbidden('the password is wrong');
    } else if (!(await this.users.recentSingleSignOn(caller.signIn))) {
      throw new Invalid(
        ['password'],
        'confirm with your password (signed in with single sign-on: sign in with it again, then delete within 5 minutes)',
      );
    }
    await this.mfa.confirm(user, input.code, source);
  }
}
