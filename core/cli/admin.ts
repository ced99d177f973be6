import { type Command, Option } from 'commander';
import { BadRequest } from '../errors';
import { type LocalCall, withLocalApi } from './local';

interface AdminUser {
  id: string;
  username: string;
  admin: boolean;
  disabled: boolean;
}
interface AdminNamespace {
  tenant_id: string;
  name: string;
  max_devices: number;
}

/**
 * Administration commands: users, namespaces and members. Each is a call of the instance administration API
 * (/api/admin/...) over the data directory's local socket: the running server answers it when there is one, so a
 * command beside `npm start` goes through the server; otherwise this process opens the store and answers itself.
 */
export function adminCommands(program: Command): void {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const api = <T>(command: string, fn: (call: LocalCall) => Promise<T>) => withLocalApi(command, fn);
  const path = (s: string) => encodeURIComponent(s);

  const user = program.command('user').description('Manage users.');
  user
    .command('create')
    .description('Create a user.')
    .requiredOption('--username <username>', 'username (3-30 of letters, digits, - _ . @)')
    .requiredOption('--email <email>', 'e-mail address')
    .requiredOption('--password <password>', 'password (5-30 characters)')
    .option('--name <name>', 'display name (defaults to the username)')
    .addOption(new Option('--admin', 'make the user an instance administrator').default(false))
    .action(
      async (o: { username: string; email: string; password: string; name?: string; admin: boolean }) => {
        await api('user create', async (call) => {
          const created = await call<AdminUser>('POST', '/api/admin/users', {
            username: o.username,
            email: o.email,
            password: o.password,
            name: o.name ?? o.username.slice(0, 20),
            admin: o.admin,
          });
          out(
            `created user ${created.username} (${created.id})${created.admin ? ', instance administrator' : ''}`,
          );
        });
      },
    );
  user
    .command('password')
    .description("Set a user's password (signs out their existing sessions).")
    .requiredOption('--username <username>', 'username or e-mail')
    .requiredOption('--password <password>', 'new password (5-30 characters)')
    .action(async (o: { username: string; password: string }) => {
      await api('user password', async (call) => {
        const u = await call<AdminUser>('PUT', `/api/admin/users/${path(o.username)}/password`, {
          password: o.password,
        });
        out(`password changed for ${u.username}`);
      });
    });
  user
    .command('admin')
    .description('Make a user an instance administrator, or with --revoke no longer one.')
    .argument('<username>', 'username or e-mail')
    .addOption(new Option('--revoke', 'revoke instead of grant').default(false))
    .action(async (username: string, o: { revoke: boolean }) => {
      await api('user admin', async (call) => {
        const u = await call<AdminUser>('PATCH', `/api/admin/users/${path(username)}`, { admin: !o.revoke });
        out(`${u.username} is ${u.admin ? 'now' : 'no longer'} an instance administrator`);
      });
    });
  for (const [name, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    user
      .command(name)
      .description(
        disabled
          ? 'Disable an account: no sign-in; its tokens and the API keys it created stop working.'
          : 'Enable a disabled account again.',
      )
      .argument('<username>', 'username or e-mail')
      .action(async (username: string) => {
        await api(`user ${name}`, async (call) => {
          const u = await call<AdminUser>('PATCH', `/api/admin/users/${path(username)}`, { disabled });
          out(`${u.username} is ${u.disabled ? 'disabled' : 'enabled'}`);
        });
      });
  }
  user
    .command('list')
    .description('List the users of the instance.')
    .action(async () => {
      await api('user list', async (call) => {
        for (let page = 1; ; page++) {
          const users = await call<AdminUser[]>('GET', `/api/admin/users?per_page=100&page=${page}`);
          for (const u of users) {
            const flags = [u.admin ? 'admin' : '', u.disabled ? 'disabled' : ''].filter(Boolean).join(',');
            out(`${u.username}\t${u.id}${flags ? `\t${flags}` : ''}`);
          }
          if (users.length < 100) break;
        }
      });
    });

  const ns = program.command('namespace').description('Manage namespaces.');
  ns.command('create')
    .description('Create a namespace owned by a user.')
    .requiredOption('--name <name>', 'namespace name (3-30 of a-z, 0-9, -)')
    .requiredOption('--owner <username>', 'username or e-mail of the owner')
    .action(async (o: { name: string; owner: string }) => {
      await api('namespace create', async (call) => {
        const created = await call<AdminNamespace>('POST', '/api/admin/namespaces', {
          name: o.name,
          owner: o.owner,
        });
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
      await api('namespace set-max-devices', async (call) => {
        const target = await call<AdminNamespace>('PATCH', `/api/admin/namespaces/${path(o.namespace)}`, {
          max_devices: o.max,
        });
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
      if (!['administrator', 'operator', 'observer'].includes(o.role)) {
        throw new BadRequest('--role must be administrator, operator or observer', ['role']);
      }
      await api('member add', async (call) => {
        const target = await call<AdminNamespace>(
          'POST',
          `/api/admin/namespaces/${path(o.namespace)}/members`,
          { user: o.username, role: o.role },
        );
        out(`added ${o.username} to ${target.name} as ${o.role}`);
      });
    });
}
