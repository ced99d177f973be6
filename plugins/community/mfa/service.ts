import { createHash, randomInt } from 'node:crypto';
import {
  type Cache,
  Conflict,
  htmlText,
  Invalid,
  type Logger,
  type Mailer,
  NotFound,
  type SealedColumn,
  type SecretBox,
  ServiceUnavailable,
  secretsEqual,
  type TokenService,
  Unauthorized,
} from '@gatehouse/core';
import type { Knex } from 'knex';
import { type Lockout, lockedOut } from '../users/lockout';
import { User } from '../users/model';
import type { UserRow, UserService } from '../users/service';
import { RecoveryCode } from './model';
import type { MfaSecret } from './schemas';
import { matchTotp, newTotpSecret, otpauthLink } from './totp';

/** A used recovery code may still disable MFA for 10 minutes. */
export const RECOVERY_WINDOW_SECONDS = 600;
/** MFA reset codes live at most one day. */
export const RESET_CODE_SECONDS = 86_400;
/** How long a generated secret waits for the enable call. */
const PENDING_SECONDS = 3_600;
const RECOVERY_CODES = 6;
/** TOTP secrets are sealed with the operator's key (core/secrets.ts): a dump of the store signs in nobody. */
export const MFA_SECRETS: SealedColumn = { table: 'users', column: 'mfa_secret', key: 'id' };

export function digest(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** Recovery codes are read back by people: case, spaces and dashes do not matter. */
function normalCode(code: string): string {
  return code.toUpperCase().replace(/[\s-]/g, '');
}

function newRecoveryCode(): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  let code = '';
  for (let i = 0; i < 10; i++) code += alphabet[randomInt(alphabet.length)];
  return code;
}

/**
 * Multi-factor sign-in with TOTP: generate, enable, the second login step, disable,
 * recovery codes and the e-mailed reset. Every code check is throttled per (source, user) and compared in constant
 * time; recovery codes are stored as digests and each works once.
 */
export class MfaService {
  private readonly db: Knex;
  private readonly cache: Cache;
  private readonly users: UserService;
  private readonly tokens: TokenService;
  private readonly lockout: Lockout;
  private readonly mailer: Mailer;
  private readonly secrets: SecretBox;
  private readonly log: Logger;
  /** Reset mails being sent after their answer (awaited on shutdown). */
  private readonly sending = new Set<Promise<unknown>>();

  constructor(deps: {
    secrets: SecretBox;
    log: Logger;
    db: Knex;
    cache: Cache;
    users: UserService;
    tokens: TokenService;
    lockout: Lockout;
    mailer: Mailer;
  }) {
    this.db = deps.db;
    this.cache = deps.cache;
    this.users = deps.users;
    this.tokens = deps.tokens;
    this.lockout = deps.lockout;
    this.mailer = deps.mailer;
    this.secrets = deps.secrets;
    this.log = deps.log;
  }

  private secretOf(user: UserRow): string | undefined {
    return user.mfa_secret ? this.secrets.open(user.mfa_secret, MFA_SECRETS, user.id) : undefined;
  }

  /** A new secret and recovery codes, held until `enable` confirms them with a code from the app. */
  async generate(userId: string): Promise<MfaSecret> {
    const user = await this.users.get(userId);
    const secret = newTotpSecret();
    const codes = Array.from({ length: RECOVERY_CODES }, newRecoveryCode);
    await this.cache.set(
      `mfa:pending:${userId}`,
      JSON.stringify({ secret, codes: codes.map((c) => digest(c)) }),
      PENDING_SECONDS,
    );
    return { link: otpauthLink(secret, user.email), secret, recovery_codes: codes };
  }

  async enable(
    userId: string,
    input: { code: string; secret: string; recovery_codes: string[] },
    source: string,
  ) {
    const user = await this.users.get(userId);
    if (user.mfa_enabled) throw new Conflict(['mfa'], 'MFA is already enabled');
    if (!user.recovery_email) throw new Invalid(['recovery_email'], 'enabling MFA needs a recovery e-mail');
    const pending = JSON.parse((await this.cache.get(`mfa:pending:${userId}`)) ?? 'null') as {
      secret: string;
      codes: string[];
    } | null;
    const sent = input.recovery_codes.map((c) => digest(normalCode(c))).sort();
    if (
      !pending ||
      !secretsEqual(pending.secret, input.secret) ||
      !secretsEqual(JSON.stringify([...pending.codes].sort()), JSON.stringify(sent))
    ) {
      throw new Invalid(['secret'], 'generate a secret first and send back what it gave');
    }
    await this.checkTotp(user, pending.secret, input.code, source, 'code');
    await this.db.transaction(async (trx) => {
      await User.bindKnex(this.db)
        .query(trx)
        .findById(userId)
        .patch({ mfa_enabled: true, mfa_secret: this.secrets.seal(pending.secret, MFA_SECRETS, userId) });
      await this.codes(trx).where({ user_id: userId }).delete();
      await this.codes(trx).insert(pending.codes.map((d) => ({ user_id: userId, code_digest: d })));
    });
    await this.cache.del(`mfa:pending:${userId}`);
  }

  /** The second step of sign-in: the `X-MFA-Token` from the login answer and a code from the app. */
  async authenticate(mfaToken: string, code: string, source: string) {
    const claims = await this.tokens.verify(mfaToken, 'mfa');
    const user = await this.users.get(claims.sub).catch((err: unknown) => {
      if (err instanceof NotFound) return undefined;
      throw err;
    });
    const secret = user?.mfa_enabled ? this.secretOf(user) : undefined;
    if (!user || !secret) throw new Unauthorized();
    if (typeof claims.pwd !== 'number' || claims.pwd < new Date(user.password_changed_at).getTime()) {
      throw new Unauthorized();
    }
    await this.checkTotp(user, secret, code, source, 'auth');
    await this.users.touchLogin(user.id);
    return this.users.authResult(user);
  }

  /**
   * A step-up check before a grave act (deleting the account): a current code of the user's app when MFA is on,
   * throttled and used once like a sign-in's; nothing to check when it is off. 400 naming `code` when missing or
   * wrong.
   */
  async confirm(user: UserRow, code: string | undefined, source: string): Promise<void> {
    const secret = user.mfa_enabled ? this.secretOf(user) : undefined;
    if (!secret) return;
    if (!code) throw new Invalid(['code'], 'two-step verification is on: send a current code of your app');
    await this.checkTotp(user, secret, code, source, 'code');
  }

  /** Turns MFA off with a current code, an unused recovery code, or one used to recover in the last 10 minutes. */
  async disable(userId: string, input: { code?: string; recovery_code?: string }, source: string) {
    const user = await this.users.get(userId);
    const secret = user.mfa_enabled ? this.secretOf(user) : undefined;
    if (!secret) throw new Invalid(['mfa'], 'MFA is not enabled');
    if (input.code) {
      await this.checkTotp(user, secret, input.code, source, 'code');
    } else if (input.recovery_code) {
      const d = digest(normalCode(input.recovery_code));
      const recent = await this.cache.get(`mfa:recovered:${userId}:${d}`);
      if (!recent) await this.spendRecoveryCode(user, input.recovery_code, source);
    } else {
      throw new Invalid(['code', 'recovery_code'], 'send a code or a recovery code');
    }
    await this.turnOff(userId);
  }

  /**
   * Signs in with a recovery code instead of the app. The code is spent, but disabling MFA with it works for the
   * next 10 minutes; the answer tells when that ends (`X-Expires-At`).
   */
  async recover(identifier: string, recoveryCode: string, source: string) {
    const user = await this.users.findByLogin(identifier);
    if (!user?.mfa_enabled) {
      const guess = await this.lockout.guess('recover', source, identifier, async () => false);
      if (guess.lockedUntil) throw lockedOut(guess.lockedUntil);
      throw new Unauthorized('invalid recovery code');
    }
    const d = await this.spendRecoveryCode(user, recoveryCode, source);
    const expiresAt = Math.floor(Date.now() / 1000) + RECOVERY_WINDOW_SECONDS;
    await this.cache.set(`mfa:recovered:${user.id}:${d}`, '1', RECOVERY_WINDOW_SECONDS);
    await this.users.touchLogin(user.id);
    return { auth: await this.users.authResult(user), expiresAt };
  }

  /**
   * Mails one reset code to the main and one to the recovery address. The answer is the same whether or not the
   * user exists or has MFA on, and comes as fast: the codes are made and mailed after it, so neither the time taken
   * nor a failing mail server tells which accounts have MFA.
   */
  async requestReset(identifier: string, publicUrl: string): Promise<void> {
    // Without outgoing mail there is no reset by mail, for anyone: the same 503 to every account.
    if (!this.mailer.configured) {
      throw new ServiceUnavailable('outgoing e-mail is not configured (GATEHOUSE_SMTP_URL)');
    }
    const user = await this.users.findByLogin(identifier);
    if (!user?.mfa_enabled || !user.recovery_email) return;
    const pending = this.mailReset(user, user.recovery_email, publicUrl).catch((err: unknown) =>
      this.log.error({ err, user: user.id }, 'MFA reset codes could not be mailed'),
    );
    this.sending.add(pending);
    void pending.finally(() => this.sending.delete(pending));
  }

  /** Resolves once every reset mail started so far has been handed to the mail server (or failed). */
  async mailsSent(): Promise<void> {
    await Promise.all([...this.sending]);
  }

  private async mailReset(user: UserRow, recoveryEmail: string, publicUrl: string): Promise<void> {
    const main = String(randomInt(0, 100_000_000)).padStart(8, '0');
    const recovery = String(randomInt(0, 100_000_000)).padStart(8, '0');
    await this.cache.set(
      `mfa:reset:${user.id}`,
      JSON.stringify({ main: digest(main), recovery: digest(recovery) }),
      RESET_CODE_SECONDS,
    );
    const link = `${publicUrl}/mfa/reset/${user.id}`;
    for (const [to, code] of [
      [user.email, main],
      [recoveryEmail, recovery],
    ] as const) {
      await this.mailer.send({
        to,
        subject: 'Gatehouse: reset of multi-factor sign-in',
        text: `Someone asked to turn off multi-factor sign-in for ${user.username}.\n\nCode: ${code}\n\nEnter both codes (one was sent to each of your addresses) at ${link} within 24 hours. If this was not you, ignore this message.\n`,
        html: `<p>Someone asked to turn off multi-factor sign-in for <b>${htmlText(user.username)}</b>.</p><p>Code: <code>${code}</code></p><p>Enter both codes (one was sent to each of your addresses) at <a href="${htmlText(link)}">${htmlText(link)}</a> within 24 hours. If this was not you, ignore this message.</p>`,
      });
    }
  }

  /** Both e-mailed codes turn MFA off and sign the user in. */
  async completeReset(userId: string, mainCode: string, recoveryCode: string, source: string) {
    const guess = await this.lockout.guess('mfa-reset', source, userId, async () => {
      const stored = JSON.parse((await this.cache.get(`mfa:reset:${userId}`)) ?? 'null') as {
        main: string;
        recovery: string;
      } | null;
      const mainOk = secretsEqual(stored?.main ?? '', digest(mainCode.trim()));
      const recoveryOk = secretsEqual(stored?.recovery ?? '', digest(recoveryCode.trim()));
      return Boolean(stored && mainOk && recoveryOk);
    });
    if (!guess.ok) {
      if (guess.lockedUntil) throw lockedOut(guess.lockedUntil);
      throw new Unauthorized('invalid reset codes');
    }
    await this.cache.del(`mfa:reset:${userId}`);
    await this.turnOff(userId);
    const user = await this.users.get(userId).catch(() => {
      throw new NotFound('user');
    });
    return this.users.authResult(user);
  }

  /** A user's recovery codes: no tenant's rows. */
  private codes(trx?: Knex.Transaction) {
    return RecoveryCode.bindKnex(this.db).query(trx);
  }

  private async turnOff(userId: string) {
    await this.db.transaction(async (trx) => {
      await User.bindKnex(this.db)
        .query(trx)
        .findById(userId)
        .patch({ mfa_enabled: false, mfa_secret: null });
      await this.codes(trx).where({ user_id: userId }).delete();
    });
  }

  /** Spends a recovery code; returns its digest. Unknown or used codes count as failures. */
  private async spendRecoveryCode(user: UserRow, code: string, source: string): Promise<string> {
    const d = digest(normalCode(code));
    const guess = await this.lockout.guess('recover', source, user.id, async () => {
      // The look-up is by digest, an index probe that does not compare the secret byte by byte.
      const spent = await this.codes()
        .where({ user_id: user.id, code_digest: d })
        .whereNull('used_at')
        .patch({ used_at: new Date() });
      return spent > 0;
    });
    if (!guess.ok) {
      if (guess.lockedUntil) throw lockedOut(guess.lockedUntil);
      throw new Unauthorized('invalid recovery code');
    }
    return d;
  }

  /** A TOTP check: throttled, constant-time, and each time step accepted once (no replay). */
  private async checkTotp(
    user: UserRow,
    secret: string,
    code: string,
    source: string,
    scope: 'code' | 'auth',
  ) {
    const guess = await this.lockout.guess('mfa', source, user.id, async () => {
      const step = matchTotp(secret, code.trim());
      return step !== undefined && (await this.cache.setIfAbsent(`mfa:step:${user.id}:${step}`, '1', 120));
    });
    if (!guess.ok) {
      if (guess.lockedUntil) throw lockedOut(guess.lockedUntil);
      if (scope === 'auth') throw new Unauthorized('invalid code');
      throw new Invalid(['code'], 'invalid code');
    }
  }
}
