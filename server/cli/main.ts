import { HttpError, type Kernel, type PluginManifest } from '@gatehouse/core';
import { ConfigError } from '@gatehouse/core/config/load';
import { type ConfigEntry, configReference } from '@gatehouse/core/config/reference';
import { tuneHeap } from '@gatehouse/core/heap';
import { guardProcess } from '@gatehouse/core/process-guards';
import { StoreBusy } from '@gatehouse/core/store/lock';
import { Command, CommanderError, Option } from 'commander';
import { bundledPlugins, coreConfig, createKernel, installation, loadConfig, pluginResolver } from '../index';
import { addPluginCommands } from './commands';
import { serverRunning } from './local';

/**
 * `gatehouse`: the server and its administration, reading the same configuration as the server
 * (config/*.yaml, GATEHOUSE_CONFIG and GATEHOUSE_* variables). The host's own commands run the server and print
 * what the docs are made from; the configured plugins add the rest (the community plugin: users, namespaces...).
 */
export function buildCli(plugins: PluginManifest[] = []): Command {
  const program = new Command('gatehouse')
    .description('Gatehouse: self-hosted remote access to Linux devices over SSH.')
    .version(installation.version)
    .showHelpAfterError()
    .exitOverride()
    .hook('preAction', (_program, action) => {
      const names: string[] = [];
      for (let c: Command | null = action; c?.parent; c = c.parent) names.unshift(c.name());
      current = names.join(' ');
    });

  program
    .command('serve')
    .description('Start the server: HTTP API, console, agent tunnels and the SSH gateway.')
    .action(async () => {
      const started = performance.now();
      const kernel = await createKernel();
      // Before anything listens: from here on no single request, connection or agent can end the process.
      guardProcess(kernel.log, kernel.metrics);
      // A steady heap growth for a long-running process that moves bulk data (core/heap.ts says why).
      tuneHeap(kernel.config.heapGrowingPercent, kernel.log);
      await kernel.start();
      // Plugins say what the operator needs to know now (community: the link that creates the first user).
      await kernel.hooks.run('serve.ready', { notice: (text) => process.stdout.write(`\n${text}\n\n`) });
      kernel.log.info({ ms: Math.round(performance.now() - started) }, 'ready');
      let stopping = false;
      const stop = async (signal: string) => {
        if (stopping) return;
        stopping = true;
        kernel.log.info({ signal }, 'shutting down');
        await kernel.stop();
        process.exit(0);
      };
      process.on('SIGTERM', () => void stop('SIGTERM'));
      process.on('SIGINT', () => void stop('SIGINT'));
    });

  program
    .command('migrate')
    .description('Apply pending database migrations of the configured edition and exit.')
    .action(async () => {
      // A running server migrated its store when it started, and holds it: nothing to do, and nothing to open.
      if (await serverRunning()) {
        process.stdout.write('store is up to date (a running server holds it)\n');
        return;
      }
      await withStore(async () => {
        process.stdout.write('store is up to date\n');
      });
    });

  program
    .command('openapi')
    .description(
      'Print the OpenAPI 3.1 document of an edition, or without one of the configured plugin list (GATEHOUSE_CONFIG).',
    )
    .addArgument(
      new Command()
        .createArgument('[edition]', 'community, enterprise or cloud')
        .choices([...installation.editions]),
    )
    .action(async (edition: string | undefined) => {
      const kernel = await createKernel({
        overrides: { ...(edition ? { edition } : {}), log: { level: 'silent', pretty: false } },
      });
      process.stdout.write(`${JSON.stringify(kernel.openapi(), null, 2)}\n`);
    });

  program
    .command('permissions')
    .description(
      'Print the permission matrix of an edition: roles and caller kinds of every call (for the docs).',
    )
    .addArgument(
      new Command()
        .createArgument('[edition]', 'community, enterprise or cloud')
        .choices([...installation.editions])
        .default('community'),
    )
    .addOption(new Option('--json', 'print JSON instead of a Markdown table').default(false))
    .action(async (edition: string, opts: { json: boolean }) => {
      const { permissionMarkdown, permissionMatrix } = await import('@gatehouse/core/permissions');
      const kernel = await createKernel({
        env: {},
        overrides: { edition, log: { level: 'silent', pretty: false } },
      });
      const rows = permissionMatrix(kernel.routes);
      process.stdout.write(
        opts.json ? `${JSON.stringify(rows, null, 2)}\n` : `${permissionMarkdown(rows)}\n`,
      );
    });

  program
    .command('reference')
    .description('Print every configuration key and command (used by the docs).')
    .addOption(new Option('--json', 'print JSON').default(false))
    .action(async (opts: { json: boolean }) => {
      const ref = reference(program, await referencedPlugins(plugins));
      if (opts.json) {
        process.stdout.write(`${JSON.stringify(ref, null, 2)}\n`);
        return;
      }
      let owner: string | undefined;
      for (const c of ref.config) {
        // One heading per owner: core's settings, then each plugin's.
        if (owner === undefined || owner !== (c.plugin ?? 'core')) {
          owner = c.plugin ?? 'core';
          process.stdout.write(`# ${owner === 'core' ? 'core' : `plugin ${owner}`}\n`);
        }
        process.stdout.write(`${c.key}\t${c.env ?? ''}\t${c.description}\n`);
      }
    });

  addPluginCommands(program, plugins);
  return program;
}

/** The command being run (`user create`), named in the embedded store's lock while it holds it. */
let current = 'cli';

/** Opens the configured store (migrating it) without listeners, runs `fn`, then closes everything. */
export async function withStore(fn: (kernel: Kernel) => Promise<void>): Promise<void> {
  const kernel = await createKernel({
    http: false,
    ssh: false,
    command: current,
    overrides: { log: { level: 'warn', pretty: false } },
  });
  try {
    await kernel.openStore();
    await fn(kernel);
  } finally {
    await kernel.stop();
  }
}

/**
 * Every plugin whose settings the reference lists: all the bundled ones, whichever edition runs (the docs list
 * every key), then the configured ones that are not bundled (an outside plugin the configuration names).
 */
async function referencedPlugins(configured: PluginManifest[]): Promise<PluginManifest[]> {
  const bundled = await Promise.all(Object.values(bundledPlugins).map((load) => load()));
  return [...bundled, ...configured.filter((p) => !bundled.some((b) => b.name === p.name))];
}

/** Config keys (core's from its schema and default.yaml, each plugin's from its schema) and commands, for `reference --json` and the docs. */
function reference(program: Command, plugins: PluginManifest[]) {
  // The configuration of files alone (no environment): what an installation has before an operator changes it.
  const entries = configReference(loadConfig({}, {}), plugins);
  const ownsKey = entries.findIndex((c) => c.plugin !== undefined);
  const core = ownsKey < 0 ? entries : entries.slice(0, ownsKey);
  const config: ConfigEntry[] = [
    ...core,
    // Not a key: names a YAML file read after the edition file (core/config/load.ts).
    {
      key: '',
      env: 'GATEHOUSE_CONFIG',
      default: undefined,
      description:
        'An extra YAML file with settings, read after config/<edition>.yaml and before the variables.',
    },
    ...entries.slice(core.length),
  ];
  const commands: {
    name: string;
    usage: string;
    description: string;
    options: { flags: string; description: string }[];
  }[] = [];
  const visit = (cmd: Command, path: string[]) => {
    for (const sub of cmd.commands) {
      const name = [...path, sub.name()].join(' ');
      if (sub.commands.length) visit(sub, [...path, sub.name()]);
      else
        commands.push({
          name,
          usage: `gatehouse ${name} ${sub.usage()}`.trim(),
          description: sub.description(),
          options: sub.options.map((o) => ({ flags: o.flags, description: o.description })),
        });
    }
  };
  visit(program, []);
  return { config, commands };
}

/** The configured plugins' manifests, for the commands they add (loading them registers nothing yet). */
async function configuredPlugins(): Promise<PluginManifest[]> {
  const resolve = pluginResolver(process.env);
  return Promise.all(coreConfig(process.env).plugins.map((entry) => resolve(entry)));
}

async function main() {
  try {
    await buildCli(await configuredPlugins()).parseAsync(process.argv);
  } catch (err) {
    if (err instanceof CommanderError) process.exit(err.exitCode);
    if (err instanceof ConfigError || err instanceof HttpError || err instanceof StoreBusy) {
      process.stderr.write(
        `gatehouse: ${err.message}${err instanceof HttpError && err.fields ? ` (${err.fields.join(', ')})` : ''}\n`,
      );
      process.exit(1);
    }
    process.stderr.write(`gatehouse: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  }
}

if (process.argv[1] && /gatehouse(\.js)?$/.test(process.argv[1])) await main();
