import type { Logger, Mailer, MailMessage } from '@gatehouse/core';

/**
 * Messages sent after the answer: an answer that waited for the mail server would take longer for an existing
 * account than for an unknown one, and so tell them apart. Failures go to the log; shutdown waits for the sends.
 */
export class Outbox {
  private readonly mailer: Mailer;
  private readonly log: Logger;
  private readonly sending = new Set<Promise<void>>();

  constructor(deps: { mailer: Mailer; log: Logger }) {
    this.mailer = deps.mailer;
    this.log = deps.log;
  }

  /** Hands `message` to the mail server once the current call has answered; `what` names it in the log. */
  post(message: MailMessage, what: string): void {
    const sent = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.mailer.send(message))
      .catch((err: unknown) => this.log.error({ err, mail: what }, 'mail not sent'));
    this.sending.add(sent);
    void sent.finally(() => this.sending.delete(sent));
  }

  /** Resolves once every message posted so far was accepted by the mail server (or failed). */
  async drained(): Promise<void> {
    await Promise.all([...this.sending]);
  }
}
