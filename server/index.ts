/**
 * The Gatehouse host: the small program around the kernel. It tells the kernel where this installation's
 * configuration and console are and which editions there are (installation.ts), reads the configuration's plugin
 * list, loads each entry (bundled, npm package or path; see plugins.ts) and gives the manifests to the kernel.
 * `core/` knows the plugin contract and never a plugin; this is the one place that names them.
 */
import { Kernel, type KernelOptions } from '@gatehouse/core';
import { installation } from './installation';
import { pluginResolver } from './plugins';

export { coreConfig, installation, loadConfig } from './installation';
export { bundledPlugins, pluginResolver } from './plugins';

/** A kernel of the configured edition (or custom list), its plugins loaded by this host. */
export function createKernel(
  opts: Omit<KernelOptions, 'resolvePlugin' | 'installation'> = {},
): Promise<Kernel> {
  return Kernel.create({ installation, resolvePlugin: pluginResolver(opts.env ?? process.env), ...opts });
}
