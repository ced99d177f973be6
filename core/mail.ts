import nodemailer, { type Transporter } from 'nodemailer';
import type { Config } from './config/schema';
import { ServiceUnavailable } from './errors';
import type { Logger } from './log';

/** One outgoing message: always both a plain-text and an HTML body. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/**
 * The one mailer: nodemailer over SMTP, configured by `smtp.url` (GATEHOUSE_SMTP_URL) and `smtp.from`. Without a
 * URL, calls that must send mail answer 503 rather than pretending the mail went out.
 */
export class Mailer {
  private readonly transport: Transporter | undefined;
  private readonly from: string;
  private readonly log: Logger;

  constructor(deps: { config: Config; log: Logger }) {
    this.from = deps.config.smtp.from;
    this.log = deps.log;
    this.transport = deps.config.smtp.url ? nodemailer.createTransport(deps.config.smtp.url) : undefined;
  }

  get configured(): boolean {
    return this.transport !== undefined;
  }

  async send(message: MailMessage): Promise<void> {
    if (!this.transport)
      throw new ServiceUnavailable('outgoing e-mail is not configured (GATEHOUSE_SMTP_URL)');
    try {
      await this.transport.sendMail({ from: this.from, ...message });
    } catch (err) {
      // The recipient and subject only: bodies may hold codes.
      this.log.error({ err, to: message.to, subject: message.subject }, 'mail not sent');
      throw new ServiceUnavailable('the mail server did not accept the message');
    }
  }

  close(): void {
    this.transport?.close();
  }
}

/** Escapes text for the HTML body of a message. */
export function htmlText(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
