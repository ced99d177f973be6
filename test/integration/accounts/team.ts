import type { LoginAnswer, TestServer } from '../../support/server';

export const PASSWORD = 'correct-horse';

/** Creates a user the way the admin CLI does (community has no self-registration) and signs them in. */
export async function createUser(server: TestServer, username: string): Promise<LoginAnswer> {
  await server.kernel.container.cradle.users.create({
    name: username.slice(0, 20).padEnd(3, 'x'),
    username,
    email: `${username}@example.com`,
    password: PASSWORD,
  });
  return server.login(username, PASSWORD);
}

export interface Team {
  tenant: string;
  /** A fresh token of each role, scoped to the team's namespace. */
  tokens: Record<'owner' | 'administrator' | 'operator' | 'observer', string>;
  ids: Record<'owner' | 'administrator' | 'operator' | 'observer', string>;
}

/**
 * A namespace with one member of every role, built through the API: the owner creates the namespace and adds the
 * others; every token is then switched into it.
 */
export async function createTeam(server: TestServer, prefix: string, owner?: LoginAnswer): Promise<Team> {
  const own = owner ?? (await createUser(server, `${prefix}-owner`));
  const created = await server.api('POST', '/api/namespaces', {
    token: own.token,
    body: { name: `${prefix}-ns` },
  });
  if (created.status !== 200)
    throw new Error(`create namespace: ${created.status} ${JSON.stringify(created.body)}`);
  const tenant = created.body.tenant_id as string;
  const ownerToken = await switchTo(server, own.token, tenant);
  const tokens = { owner: ownerToken } as Team['tokens'];
  const ids = { owner: own.id } as Team['ids'];
  for (const role of ['administrator', 'operator', 'observer'] as const) {
    const user = await createUser(server, `${prefix}-${role.slice(0, 5)}`);
    const added = await server.api('POST', `/api/namespaces/${tenant}/members`, {
      token: ownerToken,
      body: { email: `${prefix}-${role.slice(0, 5)}@example.com`, role },
    });
    if (added.status !== 200) throw new Error(`add member: ${added.status} ${JSON.stringify(added.body)}`);
    const member = (added.body.members as { id: string; status: string }[]).find((m) => m.id === user.id);
    if (member?.status === 'pending') {
      // The cloud keeps an added member pending until they accept the mailed invitation (that flow has its own
      // tests in test/integration/cloud/invitations.test.ts); this team only needs them to be members.
      await server.kernel.container.cradle
        .db('namespace_members')
        .where({ tenant_id: tenant, user_id: user.id })
        .update({ status: 'accepted', expires_at: null });
    }
    tokens[role] = await switchTo(server, user.token, tenant);
    ids[role] = user.id;
  }
  return { tenant, tokens, ids };
}

export async function switchTo(server: TestServer, token: string, tenant: string): Promise<string> {
  const res = await server.api('GET', `/api/auth/token/${tenant}`, { token });
  if (res.status !== 200) throw new Error(`switch: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.token as string;
}

/** An API key of `role` in the namespace `ownerToken` is scoped to. */
export async function createKey(
  server: TestServer,
  ownerToken: string,
  name: string,
  role: string,
): Promise<string> {
  const res = await server.api('POST', '/api/namespaces/api-key', {
    token: ownerToken,
    body: { name, expires_in: 30, role },
  });
  if (res.status !== 200) throw new Error(`create key: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}
