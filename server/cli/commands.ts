import {
  BadRequest,
  type CliAction,
  type CliCommand,
  type CliInput,
  type LocalCall,
  type PluginManifest,
} from '@gatehouse/core';
import { type Command, Option } from 'commander';
import { withLocalApi } from './local';

/**
 * Mounts the commands the plugins' manifests declare (`cli`) on the program: groups merge by name (the first
 * description stays), and a command word taken twice stops the CLI naming both plugins.
 */
export function addPluginCommands(program: Command, plugins: PluginManifest[]): void {
  const owners = new Map<Command, Map<string, string>>();
  const mount = (parent: Command, path: string[], cmd: CliCommand, plugin: string) => {
    const taken = owners.get(parent) ?? new Map<string, string>();
    owners.set(parent, taken);
    const existing = parent.commands.find((c) => c.name() === cmd.name);
    if ('commands' in cmd) {
      // A group: another plugin (or this one) may already have started it.
      if (existing && existing.commands.length === 0) {
        throw new Error(`plugin ${plugin}: "${[...path, cmd.name].join(' ')}" is already a command`);
      }
      const group = existing ?? parent.command(cmd.name).description(cmd.describe);
      if (!existing) taken.set(cmd.name, plugin);
      for (const sub of cmd.commands) mount(group, [...path, cmd.name], sub, plugin);
      return;
    }
    if (existing) {
      const other = taken.get(cmd.name) ?? 'gatehouse';
      throw new Error(
        `plugins ${other} and ${plugin} both add the command "${[...path, cmd.name].join(' ')}"`,
      );
    }
    taken.set(cmd.name, plugin);
    addAction(parent.command(cmd.name), [...path, cmd.name].join(' '), cmd);
  };
  for (const p of plugins) for (const cmd of p.cli ?? []) mount(program, [], cmd, p.name);
}

function addAction(command: Command, fullName: string, action: CliAction): void {
  command.description(action.describe);
  for (const a of action.args ?? []) {
    const arg = command.createArgument(a.optional ? `[${a.name}]` : `<${a.name}>`, a.describe);
    if (a.choices) arg.choices([...a.choices]);
    if (a.default !== undefined) arg.default(a.default);
    command.addArgument(arg);
  }
  for (const [key, o] of Object.entries(action.options ?? {})) {
    const flag = `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
    const option = new Option(o.value ? `${flag} ${o.value}` : flag, o.describe);
    if (o.required) option.makeOptionMandatory();
    if (!o.value) option.default(false);
    else if (o.default !== undefined) option.default(o.default);
    if (o.integer) {
      option.argParser((v: string) => {
        if (!/^-?\d+$/.test(v.trim()))
          throw new BadRequest(`${flag} must be a whole number; got "${v}"`, [key]);
        return Number(v.trim());
      });
    }
    command.addOption(option);
  }
  command.action(async (...received: unknown[]) => {
    const args: Record<string, string | undefined> = {};
    for (const [i, a] of (action.args ?? []).entries()) args[a.name] = received[i] as string | undefined;
    const options = received[(action.args ?? []).length] as Record<string, string | number | boolean>;
    await withLocalApi(fullName, (api: LocalCall) => {
      const input: CliInput = {
        args: args as CliInput['args'],
        options: options as CliInput['options'],
        api,
        out: (line) => process.stdout.write(`${line}\n`),
      };
      return action.run(input);
    });
  });
}
