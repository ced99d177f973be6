import type { RegisterContext } from '@gatehouse/core';
import { asClass } from 'awilix';
import { sshkeyRoutes } from './routes';
import { NamespacePublicKeys } from './service';

declare module '@gatehouse/core/cradle' {
  interface Cradle {
    /** Request-scoped: the public keys of the caller's namespace. */
    namespacePublicKeys: NamespacePublicKeys;
  }
}

/**
 * Public keys: the calls that manage a namespace's keys and the gateway-key signature call. The check the gateway
 * makes when a key is offered (`publicKeys`) is the gateway's (gateway/index.ts).
 */
export function register(ctx: RegisterContext): void {
  ctx.provide({ namespacePublicKeys: asClass(NamespacePublicKeys).scoped() });
  ctx.routes(sshkeyRoutes);
}
