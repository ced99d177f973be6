import type { Installation } from './installation';
import type { LogDestination } from './log';
import type { PluginManifest, PluginResolver } from './plugin';

/** What a host gives the kernel (`Kernel.create`): its installation and plugin resolver, and how to run. */
export interface KernelOptions {
  /** Where the configuration and the console are, the editions there are, the version: the host's to say. */
  installation: Installation;
  /**
   * Turns each entry of the configuration's `plugins` list into its manifest. Core knows the plugin contract and
   * never a plugin: the host (`server/`) says what an entry names (a bundled plugin, an npm package, a path).
   */
  resolvePlugin: PluginResolver;
  env?: NodeJS.ProcessEnv;
  /** Config values that win over files and environment (tests, CLI flags). */
  overrides?: Record<string, unknown>;
  /** Keep the embedded database in memory (tests). */
  memoryDb?: boolean;
  /** Skip binding the SSH gateway (CLI commands that only need the store). */
  ssh?: boolean;
  /** Skip binding HTTP (CLI commands that only need the store). */
  http?: boolean;
  /** Plugins loaded after the edition's own (tests of core conventions use a fixture plugin this way). */
  extraPlugins?: PluginManifest[];
  /** What this process is, as the embedded store's lock names its holder (`serve`, or the CLI command). */
  command?: string;
  /** Where the log goes instead of standard output (tests keep the last lines to say what a hung step did). */
  logDestination?: LogDestination;
}
