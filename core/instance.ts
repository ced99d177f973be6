import type { PermissionRow } from './permissions';
import type { SealedColumn } from './secrets';

/** Things a plugin says about the instance in `GET /info` (e.g. enterprise turns `saml` on when configured). */
export interface InstanceFeatures {
  authentication: { local: boolean; saml: boolean };
}

/** A running plugin's console module as `GET /info` lists it for the console. */
export interface ConsoleModuleEntry {
  plugin: string;
  url: string;
}

/**
 * What the running server says about itself to its plugins: the container's `instance` entry. A value, not the
 * kernel: plugins read what the instance is, they do not drive it.
 */
export interface Instance {
  /** The product version, as the host gives it. */
  readonly version: string;
  /** The running plugins' names, in load order. */
  readonly plugins: readonly string[];
  /** The running plugins' console modules, in load order (the console fills its slots in that order). */
  readonly consoleModules: readonly ConsoleModuleEntry[];
  /** The port HTTP listens on: the bound one once it listens (port 0 picks one), the configured one before. */
  readonly httpPort: number;
  /** The port the SSH gateway listens on, likewise. */
  readonly sshPort: number;
  /** How the other instances of the installation reach this one's internal listener. */
  readonly internalAddress: string;
  /** Columns holding secrets: core's instance keys and those the plugins declared (`RegisterContext.sealed`). */
  readonly sealedColumns: readonly SealedColumn[];
  /** The installation's files that plugins serve, by name (`Installation.assets`). */
  readonly assets: Readonly<Record<string, string>>;
  /**
   * The permission matrix of the running routes (`permissions.ts`): the one table the router checks and the console
   * reads (`GET /info`) to hide what a role cannot do. Read once the plugins have registered.
   */
  readonly permissions: readonly PermissionRow[];
}
