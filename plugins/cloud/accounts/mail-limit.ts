import { type Cache, TooManyRequests } from '@gatehouse/core';
import { sourceBlock } from '@gatehouse/plugin-community';

/** Calls one source (an address, or a signed-in user for invitations) may make per window, per kind of call. */
export const MAILS_PER_SOURCE = 20;
/** Messages one recipient (an e-mail address or the username typed) may be sent per window, per kind of call. */
export const MAILS_PER_RECIPIENT = 3;
export const MAIL_WINDOW_SECONDS = 15 * 60;

/**
 * The rate limit of every call that sends mail (sign-up, verification again, password recovery, invitations), so
 * the server cannot be made to flood an inbox or the mail relay. Counted per source and per recipient as typed,
 * whether or not an account has it, so a refusal says nothing about accounts. Over the limit answers 429 with
 * `Retry-After`; a refused call keeps the window going.
 */
export class MailLimit {
  private readonly cache: Cache;

  constructor(deps: { cache: Cache }) {
    this.cache = deps.cache;
  }

  async take(kind: string, source: string, recipient: string): Promise<void> {
    const bySource = `mail-limit:${kind}:source:${sourceBlock(source)}`;
    const byRecipient = `mail-limit:${kind}:to:${recipient.trim().toLowerCase()}`;
    for (const [key, budget] of [
      [bySource, MAILS_PER_SOURCE],
      [byRecipient, MAILS_PER_RECIPIENT],
    ] as const) {
      const n = await this.cache.incr(key, MAIL_WINDOW_SECONDS);
      if (n > budget) {
        const wait = Math.max(1, await this.cache.ttl(key));
        throw new TooManyRequests('too many messages asked for; try again later', {
          'Retry-After': String(wait),
          'Access-Control-Expose-Headers': 'Retry-After',
        });
      }
    }
  }
}
