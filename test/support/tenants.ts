import { expect } from 'chai';
import { agentAuthRequest } from './device-keys';
import type { LoginAnswer, TestServer } from './server';

/** What `POST /api/devices/auth` answers a registering agent. */
export interface Registered {
  uid: string;
  token: string;
  name: string;
  namespace: string;
}

/** Registers a device the way its agent does (signed with the key of `keyLabel`); anything but a 200 fails the test. */
export async function registerDevice(
  server: Pick<TestServer, 'api'>,
  device: Parameters<typeof agentAuthRequest>[0],
): Promise<Registered> {
  const res = await server.api('POST', '/api/devices/auth', agentAuthRequest(device));
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return res.body as Registered;
}

/** Creates another namespace owned by `owner` and signs in to it: the tenant a test keeps out of its own. */
export async function otherNamespace(
  server: Pick<TestServer, 'api'>,
  owner: LoginAnswer,
  name = 'elsewhere',
): Promise<LoginAnswer> {
  const ns = await server.api('POST', '/api/namespaces', { token: owner.token, body: { name } });
  expect(ns.status, JSON.stringify(ns.body)).to.equal(200);
  const switched = await server.api('GET', `/api/auth/token/${ns.body.tenant_id}`, { token: owner.token });
  expect(switched.status, JSON.stringify(switched.body)).to.equal(200);
  return switched.body as LoginAnswer;
}

/**
 * Creates an account (as the instance administrator `owner`) and adds it to `owner`'s namespace with `role`;
 * returns its sign-in and account id. Its password is `<username>-password-1`.
 */
export async function addMember(
  server: Pick<TestServer, 'api' | 'login'>,
  owner: LoginAnswer,
  username: string,
  role: string,
): Promise<LoginAnswer & { accountId: string }> {
  const email = `${username}@example.com`;
  const password = `${username}-password-1`;
  const created = await server.api('POST', '/api/admin/users', {
    token: owner.token,
    body: { name: username, username, email, password },
  });
  expect(created.status, `creating ${username}: ${JSON.stringify(created.body)}`).to.equal(200);
  const added = await server.api('POST', `/api/namespaces/${owner.tenant}/members`, {
    token: owner.token,
    body: { email, role },
  });
  expect(added.status, `adding ${username}: ${JSON.stringify(added.body)}`).to.equal(200);
  return { ...(await server.login(username, password)), accountId: created.body.id as string };
}
