import { createHash, randomBytes } from 'node:crypto';
import { type Cache, defineRoute, TooManyRequests, Unauthorized } from '@gatehouse/core';
import { Type as T } from '@sinclair/typebox';
import type { SignInPenalties } from './sign-in-penalties';

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
 *
 * Each ticket allows one sign-in attempt on the device, so tickets are counted per user: `perMinute` within a
 * minute of the user's last one (`ssh.terminalTicketsPerMinute`), then 429 with Retry-After, on every instance.
 * A source refused for failed sign-ins gets none either (its socket would be refused): the console shows why.
 */
export class TerminalTickets {
  constructor(
    private readonly cache: () => Cache,
    private readonly signIns: () => SignInPenalties,
    private readonly perMinute: number,
  ) {}

  async issue(
    grant: Omit<TicketGrant, 'issued'>,
    ip: string,
  ): Promise<{ ticket: string; expires_in: number }> {
    const refusedFor = await this.signIns().sourceRefusedFor(ip);
    if (refusedFor > 0) {
      throw new TooManyRequests(`too many failed sign-ins from ${ip}; try again in ${refusedFor} seconds`, {
        'Retry-After': String(refusedFor),
      });
    }
    if ((await this.cache().incr(`terminal-tickets:${grant.sub}`, 60)) > this.perMinute) {
      throw new TooManyRequests(`at most ${this.perMinute} web terminals a minute; try again in 60 seconds`, {
        'Retry-After': '60',
      });
    }
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
      `socket to the given target, within ${TICKET_TTL} seconds. The token itself never goes in a URL. A user ` +
      'gets a limited number a minute (`ssh.terminalTicketsPerMinute`, 429 with Retry-After beyond). On the ' +
      'socket, the first text frame signs in to the device: `{"type":"auth","password":"..."}`, or ' +
      '`{"type":"auth","method":"publickey","key":"<OpenSSH public key line>"}`, which the gateway answers with ' +
      '`{"type":"challenge","namespace":"gatehouse-web-terminal","nonce":"<base64>"}`; the browser answers ' +
      '`{"type":"signature","signature":"<base64 SSH signature blob>"}` over the SSHSIG data of the nonce (as ' +
      '`ssh-keygen -Y sign -n gatehouse-web-terminal` signs), so the private key never leaves it. A wrong password ' +
      'or signature earns the same penalties as through the SSH gateway: the answer comes later the more its ' +
      'source failed, and a source beyond its minimum gets 429, here and on the socket, until its time runs out.',
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
        429: null,
      },
    },
    async handler({ body, caller, ctx, services, tenantId }) {
      if (caller.kind !== 'user') throw new Unauthorized();
      return services.terminalTickets.issue(
        { sub: caller.userId, tenant: tenantId(), target: body.target, signIn: caller.signIn },
        ctx.ip.replace(/^::ffff:/, ''),
      );
    },
  }),
];
