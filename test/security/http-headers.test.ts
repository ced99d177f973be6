import { connect } from 'node:net';
import { answersSecret, SECRET_FIELDS, schemaFieldNames } from '@gatehouse/core/http/no-store';
import type { RegisteredRoute } from '@gatehouse/core/http/route';
import { expect } from 'chai';
import { totpCode } from '../../plugins/community/mfa/totp';
import { setupSignature } from '../../plugins/community/setup/signature';
import { startServer, type TestServer } from '../support/server';
import { startSmtp, type TestSmtp } from '../support/smtp';
import { label } from './lib';
import { fill } from './world';

/** One raw HTTP/1.1 exchange (fetch cannot send two Host headers): the status line's code and the whole answer. */
function rawRequest(url: string, head: string): Promise<{ status: number; text: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.write(head));
    let text = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text }));
  });
}

/** The routes whose answers carry a credential: by the names in their answer schemas, or by their own word. */
const secretRoutes = (routes: RegisteredRoute[]) => routes.filter((r) => answersSecret(r));

/**
 * HTTP headers: a request that names two hosts is refused, and every answer that carries a token or another
 * secret tells every cache between not to keep it (`Cache-Control: no-store`). The routes are found from the route
 * table of the edition with every plugin, so a route added later is covered without a line here.
 */
describe('security: HTTP headers (one Host, no-store on answers that carry a secret)', function () {
  this.timeout(120_000);
  let server: TestServer;
  let smtp: TestSmtp;

  before(async () => {
    smtp = await startSmtp();
    server = await startServer({ ssh: false, edition: 'cloud', overrides: { smtp: { url: smtp.url } } });
  });
  after(async () => {
    await server?.stop();
    await smtp?.stop();
  });

  describe('two Host headers', () => {
    const twoHosts = (path: string, extra = '') =>
      `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: attacker.example\r\n${extra}Connection: close\r\n\r\n`;

    it('answer 400 on API calls, the console and the agent and terminal upgrades; one Host still works', async () => {
      const upgrade =
        'Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n' +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n';
      for (const [path, extra] of [
        ['/info', ''],
        ['/api/devices', ''],
        ['/', 'Accept: text/html\r\n'],
        ['/ws/ssh?ticket=x', upgrade],
        ['/agent/connection', upgrade],
      ] as const) {
        const res = await rawRequest(server.url, twoHosts(path, extra));
        expect(res.status, `${path}: ${res.text.slice(0, 200)}`).to.equal(400);
        expect(res.text).to.contain('["host"]');
      }
      const one = await rawRequest(
        server.url,
        'GET /info HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
      );
      expect(one.status).to.equal(200);
    });
  });

  describe('Cache-Control: no-store', () => {
    it('the route table marks every answer naming a credential, and the ones known to carry one', () => {
      const marked = new Set(secretRoutes(server.kernel.routes).map(label));
      // Found by their answer schemas alone: any route that answers one of these names is marked.
      for (const r of server.kernel.routes) {
        const names = new Set<string>();
        for (const schema of Object.values(r.schema.response ?? {})) schemaFieldNames(schema, names);
        if ([...names].some((n) => SECRET_FIELDS.has(n))) expect(marked, label(r)).to.include(label(r));
      }
      for (const known of [
        'POST /api/login',
        'POST /api/auth/user',
        'GET /api/auth/user',
        'GET /api/auth/token/:tenant',
        'GET /api/token/:tenant',
        'PATCH /api/users',
        'DELETE /api/namespaces/:tenant/members',
        'POST /api/user/mfa/auth',
        'POST /api/user/mfa/recover',
        'PUT /api/user/mfa/reset/:id',
        'GET /api/user/mfa/generate',
        'POST /api/namespaces/api-key',
        'POST /api/setup',
        'GET /api/admin/setup-link',
        'POST /api/devices/auth',
        'POST /api/auth/device',
        'POST /api/auth/ssh',
        'POST /api/terminal/tickets',
        'POST /api/user/saml/token',
        'POST /api/namespaces/:tenant/members/invites',
      ])
        expect(marked, known).to.include(known);
      // Lists and reads of plain objects are cacheable as before.
      for (const plain of ['GET /api/devices', 'GET /api/namespaces/api-key', 'GET /info'])
        expect(marked, plain).to.not.include(plain);
    });

    it('is sent on every answer of every marked route, refusals included', async () => {
      const missing: string[] = [];
      for (const r of secretRoutes(server.kernel.routes)) {
        // No credentials and an empty body: each answers a refusal (400, 401, 403, 404), which must carry it too.
        const res = await server.api(r.method, fill(r, {}), r.method === 'GET' ? {} : { body: {} });
        if (res.headers.get('cache-control') !== 'no-store') missing.push(`${label(r)} (${res.status})`);
      }
      expect(missing).to.deep.equal([]);
    });

    it('is sent with the token of a setup, a login, an MFA login, a namespace swap and a new API key', async () => {
      const sign = setupSignature(server.kernel.container.cradle.keys);
      const setup = await server.api('POST', `/api/setup?sign=${sign}`, {
        body: { name: 'Ada Admin', username: 'ada', email: 'ada@example.com', password: 'correct-horse' },
      });
      expect(setup.status).to.equal(200);
      expect(setup.headers.get('cache-control')).to.equal('no-store');

      const login = await server.api('POST', '/api/login', {
        body: { username: 'ada', password: 'correct-horse' },
      });
      expect(login.status).to.equal(200);
      expect(login.body.token).to.be.a('string');
      expect(login.headers.get('cache-control')).to.equal('no-store');
      const token = login.body.token as string;
      const tenant = login.body.tenant as string;

      const swap = await server.api('GET', `/api/auth/token/${tenant}`, { token });
      expect(swap.status).to.equal(200);
      expect(swap.headers.get('cache-control')).to.equal('no-store');

      // A key: its secret is the answer's `id`.
      const created = await server.api('POST', '/api/namespaces/api-key', {
        token,
        body: { name: 'cache-key', expires_in: 30 },
      });
      expect(created.status).to.equal(200);
      expect(created.body.id).to.be.a('string');
      expect(created.headers.get('cache-control')).to.equal('no-store');

      // MFA: the secret and recovery codes, then the 401 with X-MFA-Token, then the token of the second step.
      await server.api('PATCH', '/api/users', { token, body: { recovery_email: 'ada@backup.example' } });
      const gen = await server.api('GET', '/api/user/mfa/generate', { token });
      expect(gen.status).to.equal(200);
      expect(gen.body.secret).to.be.a('string');
      expect(gen.headers.get('cache-control')).to.equal('no-store');
      const secret = gen.body.secret as string;
      const enabled = await server.api('PUT', '/api/user/mfa/enable', {
        token,
        body: { code: totpCode(secret, Date.now() / 1000), secret, recovery_codes: gen.body.recovery_codes },
      });
      expect(enabled.status, JSON.stringify(enabled.body)).to.equal(200);
      const first = await server.api('POST', '/api/login', {
        body: { username: 'ada', password: 'correct-horse' },
      });
      expect(first.status).to.equal(401);
      expect(first.headers.get('x-mfa-token')).to.be.a('string');
      expect(first.headers.get('cache-control')).to.equal('no-store');
      const second = await server.api('POST', '/api/user/mfa/auth', {
        body: {
          token: first.headers.get('x-mfa-token'),
          code: totpCode(secret, Date.now() / 1000 + 30),
        },
      });
      expect(second.status, JSON.stringify(second.body)).to.equal(200);
      expect(second.body.token).to.be.a('string');
      expect(second.headers.get('cache-control')).to.equal('no-store');

      // What does not answer a secret keeps its caching as it was.
      const devices = await server.api('GET', '/api/devices', { token: second.body.token });
      expect(devices.status).to.equal(200);
      expect(devices.headers.get('cache-control')).to.not.equal('no-store');
    });
  });
});
