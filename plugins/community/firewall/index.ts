import type { RegisterContext } from '@gatehouse/core';
import { asClass } from 'awilix';
import { firewallRoutes } from './routes';
import { FirewallRuleService } from './service';

declare module '@gatehouse/core/cradle' {
  interface Cradle {
    /** Request-scoped: the firewall rules of the caller's namespace. */
    firewallRules: FirewallRuleService;
  }
}

/**
 * Firewall rules: the calls that manage a namespace's rules. The firewall that judges gateway connections
 * (`firewall`) is the gateway's (gateway/index.ts).
 */
export function register(ctx: RegisterContext): void {
  ctx.provide({ firewallRules: asClass(FirewallRuleService).scoped() });
  ctx.routes(firewallRoutes);
}
