import { type Command, Option } from 'commander';
import { isRole } from '../auth/roles';
import type { Kernel } from '../boot';
import { BadRequest, NotFound } from '../errors';

type WithStore = (fn: (kernel: Kernel) => Promise<void>) => Promise<void>;

/** Administration commands: users, namespaces and members, straight against the configured store. */
export function adminCommands(program: Command, withStore: WithStore): void {
  const out = (line: string) => process.stdout.write(`${line}\n`);

  const user = program.command('user').description('Manage users.');
  user
    .command('create')
    .description('Create a user.')
    .requiredOption('--username <username>', 'username (3-30 of letters, digits, - _ . @)')
    .requiredOption('--email <email>', 'e-mail address')
    .requiredOption('--password <password>', 'password (5-30 characters)')
    .option('--name <name>', 'display name (defaults to the username)')
    .action(async (o: { username: string; email: string; password: string; name?: string }) => {
      await withStore(async (k) => {
        const { validateUserFields } = await import('@gatehouse/plugin-community/users/validate');
        const name = o.name ?? o.username.slice(0, 20);
        validateUserFields({ username: o.username, email: o.email, password: o.password, name });
        const created = await k.container.cradle.users.create({ ...o, name });
        out(`created user ${created.username} (${created.id})`);
      });
    });
  user
    .command('password')
    .description("Set a user's password (signs out their existing sessions).")
    .requiredOption('--username <username>', 'username or e-mail')
    .requiredOption('--password <password>', 'new password (5-30 characters)')
    .action(async (o: { username: string; password: string }) => {
      await withStore(async (k) => {
        const { validateUserFields } = await import('@gatehouse/plugin-community/users/validate');
        validateUserFields({ password: o.password });
        const { hashPassword } = await import('../auth/password');
        const u = await k.container.cradle.users.findByLogin(o.username);
        if (!u) throw new NotFound('user');
        await k.container.cradle.users.setPassword(u.id, await hashPassword(o.password));
        out(`password changed for ${u.username}`);
      });
    });

  const ns = program.command('namespace').description('Manage namespaces.');
  ns.command('create')
    .description('Create a namespace owned by a user.')
    .requiredOption('--name <name>', 'namespace name (3-30 of a-z, 0-9, -)')
    .requiredOption('--owner <username>', 'username or e-mail of the owner')
    .action(async (o: { name: string; owner: string }) => {
      await withStore(async (k) => {
        const { NAMESPACE_NAME } = await import('@gatehouse/plugin-community/namespaces/schemas');
        if (!NAMESPACE_NAME.test(o.name)) throw new BadRequest('invalid namespace name', ['name']);
        const owner = await k.container.cradle.users.findByLogin(o.owner);
        if (!owner) throw new NotFound('user');
        const created = await k.container.cradle.namespaces.create(o.name, owner.id);
        out(`created namespace ${created.name} (tenant ${created.tenant_id})`);
      });
    });
  ns.command('set-max-devices')
    .description('Set the device limit of a namespace (-1 for unlimited, otherwise at least 3).')
    .requiredOption('--namespace <name>', 'namespace name or tenant id')
    .addOption(
      new Option('--max <n>', 'device limit').argParser((v) => Number.parseInt(v, 10)).makeOptionMandatory(),
    )
    .action(async (o: { namespace: string; max: number }) => {
      if (!Number.isInteger(o.max) || (o.max !== -1 && o.max < 3)) {
        throw new BadRequest('--max must be -1 (unlimited) or at least 3', ['max']);
      }
      await withStore(async (k) => {
        const target = await findNamespace(k, o.namespace);
        await k.container.cradle.namespaces.setMaxDevices(target.tenant_id, o.max);
        out(`namespace ${target.name} now allows ${o.max === -1 ? 'unlimited' : o.max} devices`);
      });
    });

  program
    .command('member')
    .description('Manage namespace members.')
    .command('add')
    .description('Add a user to a namespace with a role.')
    .requiredOption('--namespace <name>', 'namespace name or tenant id')
    .requiredOption('--username <username>', 'username or e-mail')
    .requiredOption('--role <role>', 'administrator, operator or observer')
    .action(async (o: { namespace: string; username: string; role: string }) => {
      if (!isRole(o.role) || o.role === 'owner') {
        throw new BadRequest('--role must be administrator, operator or observer', ['role']);
      }
      const role = o.role;
      await withStore(async (k) => {
        const target = await findNamespace(k, o.namespace);
        const u = await k.container.cradle.users.findByLogin(o.username);
        if (!u) throw new NotFound('user');
        await k.container.cradle.namespaces.addMember(target.tenant_id, u.id, role);
        out(`added ${u.username} to ${target.name} as ${role}`);
      });
    });
}

async function findNamespace(k: Kernel, nameOrTenant: string) {
  const svc = k.container.cradle.namespaces;
  const found = /^[0-9a-f-]{36}$/i.test(nameOrTenant)
    ? await svc.byTenant(nameOrTenant)
    : await svc.byName(nameOrTenant);
  if (!found) throw new NotFound('namespace');
  return found;
}
