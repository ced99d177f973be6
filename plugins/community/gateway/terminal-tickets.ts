import { createHash, randomBytes } from 'node:crypto';
import { type Cache, defineRoute, Unauthorized } from '@gatehouse/core';
import { Type as T } from '@sinclair/typebox';

/** Seconds a ticket stays valid: the console asks for one just before it opens the socket. */
export const TICKET_TTL = 30;

/** What a ticket stands for: who asked, in which sign-in and namespace, for which target, and when. */
export interface TicketGrant {
  sub: string;
  tenant: string;
  target: string;
  /** The sign-in of the token it was issued to: signing out voids the ticket and closes the terminal it opened. */
  signIn: string;
  /** Milliseconds since epoch of the issue; a password change after it voids the ticket. */
  issued: number;
}

const keyOf = (ticket: string) => `terminal-ticket:${createHash('sha256').update(ticket).digest('hex')}`;

/**
 * Tickets for the web terminal's WebSocket (`GET /ws/ssh?ticket=`). A browser cannot set headers on a WebSocket,
 * so the user's token would have to ride in the URL, where proxies and logs keep it. Instead an authenticated
 * `POST /api/terminal/tickets` trades the token for a random ticket that is good for one socket, within
 * TICKET_TTL seconds, for the one target it names. The cache keeps only the ticket's SHA-256 (Redis when
 * configured, so any instance can redeem it), and redeeming reads and deletes in one step.
 */
export class TerminalTickets {
  constructor(private readonly cache: () => Cache) {}

  async issue(grant: Omit<TicketGrant, 'issued'>): Promise<{ ticket: string; expires_in: number }> {
    const ticket = randomBytes(32).toString('base64url');
    await this.cache().set(keyOf(ticket), JSON.stringify({ ...grant, issued: Date.now() }), TICKET_TTL);
    return { ticket, expires_in: TICKET_TTL };
  }

  /** The grant of a ticket not used before and not expired; undefined otherwise. Each ticket redeems once. */
  async redeem(ticket: string): Promise<TicketGrant | undefined> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(ticket)) return undefined;
    const raw = await this.cache().take(keyOf(ticket));
    if (!raw) return undefined;
    try {
      const grant = JSON.parse(raw) as TicketGrant;
      return typeof grant.sub === 'string' &&
        typeof grant.tenant === 'string' &&
        typeof grant.signIn === 'string'
        ? grant
        : undefined;
    } catch {
      return undefined;
    }
  }
}

export const terminalTicketRoutes = [
  defineRoute({
    method: 'POST',
    path: '/api/terminal/tickets',
    auth: ['user'],
    role: 'observer',
    summary: 'Get a single-use ticket that opens the web terminal',
    description:
      'The web terminal is a WebSocket, `GET /ws/ssh?ticket=<ticket>&cols=<n>&rows=<n>`, and a browser cannot send ' +
      'the Authorization header on one. This call trades the signed-in user token for a ticket that opens one ' +
      `socket to the given target, within ${TICKET_TTL} seconds. The token itself never goes in a URL. On the ` +
      'socket, the first text frame signs in to the device: `{"type":"auth","password":"..."}`, or ' +
      '`{"type":"auth","method":"publickey","key":"<OpenSSH public key line>"}`, which the gateway answers with ' +
      '`{"type":"challenge","namespace":"gatehouse-web-terminal","nonce":"<base64>"}`; the browser answers ' +
      '`{"type":"signature","signature":"<base64 SSH signature blob>"}` over the SSHSIG data of the nonce (as ' +
      '`ssh-keygen -Y sign -n gatehouse-web-terminal` signs), so the private key never leaves it.',
    tags: ['sessions'],
    status: 200,
    schema: {
      body: T.Object(
        {
          target: T.String({
            minLength: 1,
            maxLength: 512,
            description:
              'The SSH target, `<device-user>@<namespace>.<device>` or `<device-user>@<device-uid>`.',
          }),
        },
        { additionalProperties: false },
      ),
      response: {
        200: T.Object({
          ticket: T.String({ description: 'Opaque; good for one WebSocket.' }),
          expires_in: T.Integer({ description: 'Seconds the ticket stays valid.' }),
        }),
      },
    },
    async handler({ body, caller, services, tenantId }) {
      if (caller.kind !== 'user') throw new Unauthorized();
      return services.terminalTickets.issue({
        sub: caller.userId,
        tenant: tenantId(),
        target: body.target,
        signIn: caller.signIn,
      });
    },
  }),
];
