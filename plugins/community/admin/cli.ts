import { BadRequest, type CliCommand, defineCommand } from '@gatehouse/core';
import type { AdminNamespaceView as AdminNamespace, AdminUserView as AdminUser } from './schemas';

const path = (s: string) => encodeURIComponent(s);

const userCreate = defineCommand({
  name: 'create',
  describe: 'Create a user.',
  options: {
    username: {
      describe: 'username (3-30 of letters, digits, - _ . @)',
      value: '<username>',
      required: true,
    },
    email: { describe: 'e-mail address', value: '<email>', required: true },
    password: { describe: 'password (5-30 characters)', value: '<password>', required: true },
    name: { describe: 'display name (defaults to the username)', value: '<name>' },
    admin: { describe: 'make the user an instance administrator' },
  },
  async run({ options: o, api, out }) {
    const created = await api<AdminUser>('POST', '/api/admin/users', {
      username: o.username,
      email: o.email,
      password: o.password,
      name: o.name ?? o.username.slice(0, 20),
      admin: o.admin,
    });
    out(`created user ${created.username} (${created.id})${created.admin ? ', instance administrator' : ''}`);
  },
});

const userPassword = defineCommand({
  name: 'password',
  describe: "Set a user's password (signs out their existing sessions).",
  options: {
    username: { describe: 'username or e-mail', value: '<username>', required: true },
    password: { describe: 'new password (5-30 characters)', value: '<password>', required: true },
  },
  async run({ options: o, api, out }) {
    const u = await api<AdminUser>('PUT', `/api/admin/users/${path(o.username)}/password`, {
      password: o.password,
    });
    out(`password changed for ${u.username}`);
  },
});

const userAdmin = defineCommand({
  name: 'admin',
  describe: 'Make a user an instance administrator, or with --revoke no longer one.',
  args: [{ name: 'username', describe: 'username or e-mail' }],
  options: { revoke: { describe: 'revoke instead of grant' } },
  async run({ args, options, api, out }) {
    const u = await api<AdminUser>('PATCH', `/api/admin/users/${path(args.username)}`, {
      admin: !options.revoke,
    });
    out(`${u.username} is ${u.admin ? 'now' : 'no longer'} an instance administrator`);
  },
});

const userSwitch = (name: 'disable' | 'enable', disabled: boolean) =>
  defineCommand({
    name,
    describe: disabled
      ? 'Disable an account: no sign-in; its tokens and the API keys it created stop working.'
      : 'Enable a disabled account again.',
    args: [{ name: 'username', describe: 'username or e-mail' }],
    async run({ args, api, out }) {
      const u = await api<AdminUser>('PATCH', `/api/admin/users/${path(args.username)}`, { disabled });
      out(`${u.username} is ${u.disabled ? 'disabled' : 'enabled'}`);
    },
  });

const userList = defineCommand({
  name: 'list',
  describe: 'List the users of the instance.',
  async run({ api, out }) {
    for (let page = 1; ; page++) {
      const users = await api<AdminUser[]>('GET', `/api/admin/users?per_page=100&page=${page}`);
      for (const u of users) {
        const flags = [u.admin ? 'admin' : '', u.disabled ? 'disabled' : ''].filter(Boolean).join(',');
        out(`${u.username}\t${u.id}${flags ? `\t${flags}` : ''}`);
      }
      if (users.length < 100) break;
    }
  },
});

const namespaceCreate = defineCommand({
  name: 'create',
  describe: 'Create a namespace owned by a user.',
  options: {
    name: { describe: 'namespace name (3-30 of a-z, 0-9, -)', value: '<name>', required: true },
    owner: { describe: 'username or e-mail of the owner', value: '<username>', required: true },
  },
  async run({ options: o, api, out }) {
    const created = await api<AdminNamespace>('POST', '/api/admin/namespaces', {
      name: o.name,
      owner: o.owner,
    });
    out(`created namespace ${created.name} (tenant ${created.tenant_id})`);
  },
});

const namespaceLimit = defineCommand({
  name: 'set-max-devices',
  describe: 'Set the device limit of a namespace (-1 for unlimited, otherwise at least 3).',
  options: {
    namespace: { describe: 'namespace name or tenant id', value: '<name>', required: true },
    max: { describe: 'device limit', value: '<n>', integer: true, required: true },
  },
  async run({ options: o, api, out }) {
    if (o.max !== -1 && o.max < 3)
      throw new BadRequest('--max must be -1 (unlimited) or at least 3', ['max']);
    const target = await api<AdminNamespace>('PATCH', `/api/admin/namespaces/${path(o.namespace)}`, {
      max_devices: o.max,
    });
    out(`namespace ${target.name} now allows ${o.max === -1 ? 'unlimited' : o.max} devices`);
  },
});

const memberAdd = defineCommand({
  name: 'add',
  describe: 'Add a user to a namespace with a role.',
  options: {
    namespace: { describe: 'namespace name or tenant id', value: '<name>', required: true },
    username: { describe: 'username or e-mail', value: '<username>', required: true },
    role: { describe: 'administrator, operator or observer', value: '<role>', required: true },
  },
  async run({ options: o, api, out }) {
    if (!['administrator', 'operator', 'observer'].includes(o.role)) {
      throw new BadRequest('--role must be administrator, operator or observer', ['role']);
    }
    const target = await api<AdminNamespace>('POST', `/api/admin/namespaces/${path(o.namespace)}/members`, {
      user: o.username,
      role: o.role,
    });
    out(`added ${o.username} to ${target.name} as ${o.role}`);
  },
});

const setupUrl = defineCommand({
  name: 'setup-url',
  describe: 'Print the link that creates the first user and namespace.',
  async run({ api, out }) {
    const link = await api<{ url: string; done: boolean }>('GET', '/api/admin/setup-link');
    out(link.url);
    if (link.done)
      process.stderr.write('gatehouse: setup is already done; the link no longer creates a user\n');
  },
});

const secretsRotate = defineCommand({
  name: 'rotate',
  describe:
    'Encrypt every secret in the store with a new key (written to the key file; with GATEHOUSE_SECRET_KEY, its first key).',
  async run({ api, out }) {
    const r = await api<{ from: string[]; to: string; resealed: number }>(
      'POST',
      '/api/admin/secrets/rotate',
    );
    out(`re-encrypted ${r.resealed} secrets with key ${r.to} (was ${r.from.join(', ')})`);
  },
});

/**
 * The instance administration commands: users, namespaces, members, the setup link and the secret key. Each is a
 * call of the instance administration API (/api/admin/...), which the host sends as the operator over the data
 * directory's local socket: through the running server when there is one.
 */
export const adminCommands: CliCommand[] = [
  setupUrl,
  {
    name: 'user',
    describe: 'Manage users.',
    commands: [
      userCreate,
      userPassword,
      userAdmin,
      userSwitch('disable', true),
      userSwitch('enable', false),
      userList,
    ],
  },
  { name: 'namespace', describe: 'Manage namespaces.', commands: [namespaceCreate, namespaceLimit] },
  { name: 'member', describe: 'Manage namespace members.', commands: [memberAdd] },
  { name: 'secrets', describe: 'The key that encrypts secrets in the store.', commands: [secretsRotate] },
];
