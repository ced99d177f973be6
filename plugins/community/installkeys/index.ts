import type { RegisterContext } from '@gatehouse/core';
import { asClass } from 'awilix';
import { installKeyRoutes } from './routes';
import { InstallKeys, NamespaceInstallKeys } from './service';

declare module '@gatehouse/core/cradle' {
  interface Cradle {
    /** Checks and counts the install keys agents present when they register a new device. */
    installKeys: InstallKeys;
    /** Request-scoped: the install keys of the caller's namespace, as the API manages them. */
    namespaceInstallKeys: NamespaceInstallKeys;
  }
}

/** Install keys: their calls, and the check the device registration makes. */
export function register(ctx: RegisterContext): void {
  ctx.provide({
    installKeys: asClass(InstallKeys).singleton(),
    namespaceInstallKeys: asClass(NamespaceInstallKeys).scoped(),
  });
  ctx.routes(installKeyRoutes);
}
