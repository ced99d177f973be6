import { generateKeyPairSync, randomUUID } from 'node:crypto';
import type { TokenClaims, TokenService } from '@gatehouse/core';
import type { RegisteredRoute } from '@gatehouse/core/http/route';
import { expect } from 'chai';
import { SignJWT } from 'jose';
import { createUser, PASSWORD } from '../integration/accounts/team';
import { fillPath } from '../integration/permissions/requests';
import { type LoginAnswer, startServer, type TestServer } from '../support/server';
import { internalOnly, label, publicOnly, type Request, sendAll } from './lib';

const UNAUTHORIZED = { message: 'missing or malformed jwt or API token' };

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/**
 * Forged and misused credentials against every route that takes any (generated from the route table, so a new
 * route is covered without a line here): unsigned (alg none), signed with another key, HMAC-signed with the
 * server's public key, expired, another issuer, a payload edited under a valid signature, tokens of another kind
 * (MFA, device, instance) in place of a user token, and a user token issued before the last password change.
 * None may get past authentication; nothing answers 2xx or 5xx.
 */
describe('security: forged and misused tokens on every route', function () {
  this.timeout(120_000);
  let server: TestServer;
  let owner: LoginAnswer;
  let tokens: TokenService;
  let routes: RegisteredRoute[];
  const now = () => Math.floor(Date.now() / 1000);

  before(async () => {
    server = await startServer({ ssh: false });
    owner = await server.setup();
    tokens = server.kernel.container.cradle.tokens;
    routes = server.kernel.routes.filter((r) => !publicOnly(r));
  });
  after(async () => {
    await server?.stop();
  });

  /** The claims of the owner's real token, for forgeries that only change how it is signed. */
  const userClaims = () => {
    const [, payload] = owner.token.split('.');
    return JSON.parse(Buffer.from(payload as string, 'base64url').toString()) as TokenClaims & {
      iat: number;
      exp: number;
      iss: string;
    };
  };

  /** Every route that takes credentials, called with `token`; a body the schema refuses, so nothing can change. */
  const everyRoute = (token: string): Request[] =>
    routes.map((r) => ({
      method: r.method,
      path: fillPath(r, { tenant: owner.tenant }),
      opts: { token, ...(r.schema.body ? { raw: '[]' } : {}) },
    }));

  async function expectRefused(token: string, expected: (r: RegisteredRoute) => number[]) {
    const answers = await sendAll(server, everyRoute(token));
    const wrong: string[] = [];
    answers.forEach((res, i) => {
      const r = routes[i] as RegisteredRoute;
      const ok = internalOnly(r) ? [404] : expected(r);
      if (!ok.includes(res.status)) wrong.push(`${label(r)} -> ${res.status} ${JSON.stringify(res.body)}`);
      else if (res.status === 401 && JSON.stringify(res.body) !== JSON.stringify(UNAUTHORIZED))
        wrong.push(`${label(r)} -> 401 with ${JSON.stringify(res.body)}`);
    });
    expect(wrong, `${wrong.length} of ${routes.length} routes`).to.deep.equal([]);
  }
  const only401 = () => [401];

  it('the real token is accepted (the forgeries below differ from it only as named)', async () => {
    const res = await server.api('GET', '/api/auth/user', { token: owner.token });
    expect(res.status).to.equal(200);
  });

  it('refuses an unsigned token (alg none)', async () => {
    const token = `${b64({ alg: 'none', typ: 'JWT' })}.${b64(userClaims())}.`;
    await expectRefused(token, only401);
  });

  it('refuses a token signed with another Ed25519 key', async () => {
    const { privateKey } = generateKeyPairSync('ed25519');
    const { sub, ...rest } = userClaims();
    const token = await new SignJWT(rest)
      .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT' })
      .setSubject(sub)
      .sign(privateKey);
    await expectRefused(token, only401);
  });

  it("refuses a token HMAC-signed with the server's public key (algorithm confusion)", async () => {
    const pub = server.kernel.container.cradle.keys.jwtPublic.export({ format: 'pem', type: 'spki' });
    const { sub, ...rest } = userClaims();
    const token = await new SignJWT(rest)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(sub)
      .sign(new Uint8Array(Buffer.from(pub)));
    await expectRefused(token, only401);
  });

  it('refuses an expired token', async () => {
    const claims = userClaims();
    const token = await tokens.sign(
      { kind: 'user', sub: claims.sub, tenant: claims.tenant, pwd: claims.pwd },
      -60,
    );
    await expectRefused(token, only401);
  });

  it('refuses a token whose payload was edited under a valid signature', async () => {
    const [header, , signature] = owner.token.split('.');
    const edited = { ...userClaims(), sub: randomUUID(), exp: now() + 3600 };
    await expectRefused(`${header}.${b64(edited)}.${signature}`, only401);
  });

  it('refuses garbage, an empty bearer and a token with its signature cut off', async () => {
    const [header, payload] = owner.token.split('.');
    for (const token of ['x', 'a.b.c', `${header}.${payload}`, `${header}.${payload}.`])
      await expectRefused(token, only401);
  });

  it('refuses a user token issued before the last password change (password-change stamp)', async () => {
    const claims = userClaims();
    const stale = await tokens.sign({ kind: 'user', sub: claims.sub, tenant: claims.tenant, pwd: 0 });
    const unstamped = await tokens.sign({ kind: 'user', sub: claims.sub, tenant: claims.tenant });
    const userOr403 = (r: RegisteredRoute) => (r.auth.includes('user') ? [401] : [403]);
    await expectRefused(stale, userOr403);
    await expectRefused(unstamped, userOr403);
  });

  it('refuses a user token of a user that does not exist, or with a malformed subject', async () => {
    const claims = userClaims();
    const userOr403 = (r: RegisteredRoute) => (r.auth.includes('user') ? [401] : [403]);
    for (const sub of [randomUUID(), 'not-a-uuid', "' or 1=1 --"]) {
      const token = await tokens.sign({ kind: 'user', sub, tenant: claims.tenant, pwd: Date.now() });
      await expectRefused(token, userOr403);
    }
  });

  it('refuses MFA and instance tokens used as user tokens', async () => {
    const claims = userClaims();
    const mfa = await tokens.sign(
      { kind: 'mfa', sub: claims.sub, tenant: claims.tenant, pwd: claims.pwd },
      300,
    );
    const instance = await tokens.sign({ kind: 'instance', sub: randomUUID(), tenant: claims.tenant }, 60);
    await expectRefused(mfa, only401);
    await expectRefused(instance, only401);
  });

  it('refuses a device token on user calls, and one of an unknown device everywhere', async () => {
    const token = await tokens.sign({ kind: 'device', sub: 'f'.repeat(64), tenant: owner.tenant });
    await expectRefused(token, (r) => (r.auth.includes('device') ? [401] : [403]));
  });

  it('refuses a user or device token presented as the MFA token of the second sign-in step', async () => {
    const device = await tokens.sign({ kind: 'device', sub: 'f'.repeat(64), tenant: owner.tenant });
    for (const token of [owner.token, device]) {
      const res = await server.api('POST', '/api/user/mfa/auth', { body: { token, code: '123456' } });
      expect(res.status, token === owner.token ? 'user token' : 'device token').to.equal(401);
    }
  });

  it('refuses, on every route, a real token issued before its user changed the password', async () => {
    const user = await createUser(server, 'stamp-user');
    const changed = await server.api('PATCH', '/api/users', {
      token: user.token,
      body: { password: 'new-horse-1', current_password: PASSWORD },
    });
    expect(changed.status, JSON.stringify(changed.body)).to.equal(200);
    await expectRefused(user.token, (r) => (r.auth.includes('user') ? [401] : [403]));
    const fresh = await server.login('stamp-user', 'new-horse-1');
    expect((await server.api('GET', '/api/auth/user', { token: fresh.token })).status).to.equal(200);
  });

  it('refuses unknown and malformed API keys on every call that takes one', async () => {
    const keyed = routes.filter((r) => r.auth.includes('apiKey'));
    for (const key of [randomUUID(), 'x', "' or 1=1 --", 'k'.repeat(4096)]) {
      const answers = await sendAll(
        server,
        keyed.map((r) => ({
          method: r.method,
          path: fillPath(r, { tenant: owner.tenant }),
          opts: { apiKey: key, ...(r.schema.body ? { raw: '[]' } : {}) },
        })),
      );
      const wrong = answers
        .map((res, i) => [res, keyed[i] as RegisteredRoute] as const)
        .filter(([res]) => res.status !== 401)
        .map(([res, r]) => `${label(r)} with key ${key.slice(0, 12)} -> ${res.status}`);
      expect(wrong).to.deep.equal([]);
    }
  });
});
