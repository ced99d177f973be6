import { randomBytes } from 'node:crypto';
import { digest } from '@gatehouse/plugin-community';
import type { Knex } from 'knex';
import { AccountToken } from './model';

export type TokenPurpose = 'verify' | 'recover';

/** How long a mailed token stays good: a day to verify an address, an hour to choose a new password. */
export const TOKEN_SECONDS: Record<TokenPurpose, number> = { verify: 24 * 3600, recover: 3600 };

/**
 * The one-time tokens of mailed account links. Only their SHA-256 is stored; a new token replaces the user's
 * older one of the same purpose; using one deletes it in the same statement that checks it, so of two racing uses
 * exactly one succeeds.
 */
export class AccountTokens {
  private readonly db: Knex;

  constructor(deps: { db: Knex }) {
    this.db = deps.db;
  }

  private rows(trx?: Knex.Transaction) {
    return AccountToken.bindKnex(this.db).query(trx);
  }

  async issue(userId: string, purpose: TokenPurpose, trx?: Knex.Transaction): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    await this.rows(trx)
      .insert({
        user_id: userId,
        purpose,
        digest: digest(token),
        expires_at: new Date(Date.now() + TOKEN_SECONDS[purpose] * 1000),
        created_at: new Date(),
      })
      .onConflict(['user_id', 'purpose'])
      .merge();
    return token;
  }

  /** Spends the token: true when it was the user's current one of this purpose and not expired. */
  async consume(
    userId: string,
    purpose: TokenPurpose,
    token: string,
    trx?: Knex.Transaction,
  ): Promise<boolean> {
    // The look-up is by digest, an index probe that does not compare the secret byte by byte.
    const spent = await this.rows(trx)
      .where({ user_id: userId, purpose, digest: digest(token) })
      .where('expires_at', '>', new Date())
      .delete();
    return spent > 0;
  }
}
