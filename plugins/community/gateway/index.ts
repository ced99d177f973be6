import type { RegisterContext } from '@gatehouse/core';
import { asClass, asValue } from 'awilix';
import { FirewallService } from '../firewall/service';
import { GatewaySigner } from '../sshkeys/gateway-signer';
import { PublicKeyService } from '../sshkeys/service';
import { LiveSessions } from './live';
import { SessionShares, ShareStreams } from './shares';
import { SshGateway } from './ssh-gateway';
import { TerminalTickets, terminalTicketRoutes } from './terminal-tickets';
import { watchRoutes } from './watch-routes';
import { WebTerminal } from './web-terminal';

declare module '@gatehouse/core/cradle' {
  interface Cradle {
    /** The SSH gateway: core's SSH listener hands it each connection (see docs/content/developers/gateway.md). */
    sshGateway: SshGateway;
    liveSessions: LiveSessions;
    publicKeys: PublicKeyService;
    firewall: FirewallService;
    /** Signs agents' gateway-key blobs (`POST /api/auth/ssh`). */
    gatewaySigner: GatewaySigner;
    terminalTickets: TerminalTickets;
    webTerminal: WebTerminal;
    /** The share links of the caller's namespace's sessions (request-scoped). */
    sessionShares: SessionShares;
    /** The streams this server holds on share links, ended at once when a link is revoked. */
    shareStreams: ShareStreams;
  }
}

/**
 * The SSH gateway: the gateway that turns the connections of core's SSH listener (and the web terminal's)
 * into device sessions, with the key check and the firewall it judges connections by. The sessions it records are
 * the sessions feature's (sessions/index.ts).
 */
export function register(ctx: RegisterContext): void {
  ctx.provide({
    sshGateway: asClass(SshGateway).singleton(),
    liveSessions: asClass(LiveSessions)
      .singleton()
      .disposer((live) => live.stop()),
    sessionShares: asClass(SessionShares).scoped(),
    shareStreams: asClass(ShareStreams)
      .singleton()
      .disposer((streams) => streams.stop()),
    publicKeys: asClass(PublicKeyService).singleton(),
    firewall: asClass(FirewallService).singleton(),
    gatewaySigner: asClass(GatewaySigner).singleton(),
    terminalTickets: asValue(
      new TerminalTickets(
        () => ctx.resolve('cache'),
        () => ctx.resolve('sshGateway').signIns,
        ctx.config.ssh.terminalTicketsPerMinute,
      ),
    ),
  });
  ctx.ssh({ handle: (conn, info) => ctx.resolve('sshGateway').handle(conn, info) });
  ctx.routes(terminalTicketRoutes);
  ctx.routes(watchRoutes);
  const terminal = new WebTerminal({
    gateway: () => ctx.resolve('sshGateway'),
    tickets: () => ctx.resolve('terminalTickets'),
    users: () => ctx.resolve('users'),
    cache: () => ctx.resolve('cache'),
    preAuthSeconds: ctx.config.ssh.preAuthTimeout,
    trustProxy: ctx.config.http.trustProxy,
    log: ctx.log.child({ part: 'web-terminal' }),
  });
  ctx.provide({ webTerminal: asValue(terminal) });
  ctx.upgrade(terminal.upgrade, () => terminal.stop());
}
