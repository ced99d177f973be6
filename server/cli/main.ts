import { HttpError, Kernel, type PluginManifest, version } from '@gatehouse/core';
import { ConfigError, loadConfig } from '@gatehouse/core/config/load';
import { configSchema, envKeys } from '@gatehouse/core/config/schema';
import { tuneHeap } from '@gatehouse/core/heap';
import { guardProcess } from '@gatehouse/core/process-guards';
import { StoreBusy } from '@gatehouse/core/store/lock';
import { Command, CommanderError, Option } from 'commander';
import { createKernel, pluginResolver } from '../index';
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
    .version(version)
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
        .choices(['community', 'enterprise', 'cloud']),
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
        .choices(['community', 'enterprise', 'cloud'])
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
    .action((opts: { json: boolean }) => {
      const ref = reference(program);
      if (opts.json) {
        process.stdout.write(`${JSON.stringify(ref, null, 2)}\n`);
        return;
      }
      for (const c of ref.config) process.stdout.write(`${c.key}\t${c.env ?? ''}\t${c.description}\n`);
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

interface ConfigEntry {
  key: string;
  env: string | undefined;
  default: unknown;
  description: string;
}

/** Config keys (from the schema and default.yaml) and commands, for `reference --json` and the docs. */
function reference(program: Command) {
  const defaults = Kernel.defaults();
  const config: ConfigEntry[] = [];
  const walk = (schema: { properties?: Record<string, unknown> }, prefix: string) => {
    for (const [k, s] of Object.entries(schema.properties ?? {})) {
      const sub = s as { properties?: Record<string, unknown>; description?: string; type?: string };
      const key = prefix ? `${prefix}.${k}` : k;
      if (sub.type === 'object' && sub.properties) walk(sub, key);
      else {
        const env = Object.entries(envKeys).find(([, v]) => v === key)?.[0];
        config.push({ key, env, default: pickKey(defaults, key), description: sub.description ?? '' });
      }
    }
  };
  walk(configSchema as never, '');
  // Not a key: names a YAML file read after the edition file (core/config/load.ts).
  config.push({
    key: '',
    env: 'GATEHOUSE_CONFIG',
    default: undefined,
    description:
      'An extra YAML file with settings, read after config/<edition>.yaml and before the variables.',
  });
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

function pickKey(tree: unknown, key: string): unknown {
  let cur = tree;
  for (const part of key.split('.')) cur = (cur as Record<string, unknown> | undefined)?.[part];
  return cur;
}

/** The configured plugins' manifests, for the commands they add (loading them registers nothing yet). */
async function configuredPlugins(): Promise<PluginManifest[]> {
  const resolve = pluginResolver(process.env);
  return Promise.all(loadConfig(process.env, {}).plugins.map((entry) => resolve(entry)));
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
