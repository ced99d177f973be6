import type { RegisterContext } from '@gatehouse/core';
import { asClass, asValue } from 'awilix';
import { firewallRoutes } from '../firewall/routes';
import { FirewallService } from '../firewall/service';
import { sessionRoutes } from '../sessions/routes';
import { SessionService } from '../sessions/service';
import { GatewaySigner } from '../sshkeys/gateway-signer';
import { sshkeyRoutes } from '../sshkeys/routes';
import { PublicKeyService } from '../sshkeys/service';
import { GatewayService } from './connector';
import { LiveSessions } from './live';
import { TerminalTickets, terminalTicketRoutes } from './terminal-tickets';
import { WebTerminal } from './web-terminal';

declare module '@gatehouse/core/cradle' {
  interface Cradle {
    /** Core's SSH listener hands each connection to this (DESIGN.md section 7). */
    gatewayConnector: GatewayService;
    liveSessions: LiveSessions;
    sessions: SessionService;
    publicKeys: PublicKeyService;
    firewall: FirewallService;
    /** Signs agents' gateway-key blobs (`POST /api/auth/ssh`). */
    gatewaySigner: GatewaySigner;
    terminalTickets: TerminalTickets;
  }
}

/**
 * The SSH gateway end to end (issue 5): public keys, firewall rules, sessions and recordings, and the connector
 * that turns core's SSH listener into device sessions.
 */
export function registerGateway(ctx: RegisterContext): void {
  ctx.provide({
    gatewayConnector: asClass(GatewayService).singleton(),
    liveSessions: asClass(LiveSessions)
      .singleton()
      .disposer((live) => live.stop()),
    sessions: asClass(SessionService).singleton(),
    publicKeys: asClass(PublicKeyService).singleton(),
    firewall: asClass(FirewallService).singleton(),
    gatewaySigner: asClass(GatewaySigner).singleton(),
    terminalTickets: asValue(new TerminalTickets(() => ctx.resolve('cache'))),
  });
  ctx.routes([...sshkeyRoutes, ...firewallRoutes, ...sessionRoutes, ...terminalTicketRoutes]);
  const terminal = new WebTerminal({
    gateway: () => ctx.resolve('gatewayConnector'),
    tickets: () => ctx.resolve('terminalTickets'),
    users: () => ctx.resolve('users'),
    preAuthSeconds: ctx.config.ssh.preAuthTimeout,
    log: ctx.log.child({ part: 'web-terminal' }),
  });
  ctx.upgrade(terminal.upgrade, () => terminal.stop());
}
