import { expect } from 'chai';
import ssh2 from 'ssh2';
import { agentAuthRequest } from '../../support/device-keys';
import { type LoginAnswer, startServer, type TestServer } from '../../support/server';

/** The HTTP calls of public keys, firewall rules and sessions, without an agent. */
describe('gateway API: public keys, firewall rules, sessions and the gateway signature', () => {
  let server: TestServer;
  let owner: LoginAnswer;
  const call = (method: string, path: string, body?: unknown) =>
    server.api(method, path, { token: owner.token, ...(body === undefined ? {} : { body }) });
  const keyData = () => {
    let pair = ssh2.utils.generateKeyPairSync('ed25519', { comment: 'test' });
    while (ssh2.utils.parseKey(pair.private) instanceof Error)
      pair = ssh2.utils.generateKeyPairSync('ed25519');
    return Buffer.from(pair.public).toString('base64');
  };

  before(async () => {
    server = await startServer({ ssh: false });
    owner = await server.setup();
  });
  after(async () => {
    await server?.stop();
  });

  describe('public keys', () => {
    it('creates a key with its MD5 fingerprint as colon-separated hex pairs', async () => {
      const data = keyData();
      const res = await call('POST', '/api/sshkeys/public-keys', {
        data,
        name: 'laptop',
        username: '^root$',
        filter: { hostname: '.*' },
      });
      expect(res.status).to.equal(200);
      expect(res.body.fingerprint).to.match(/^[0-9a-f]{2}(:[0-9a-f]{2}){15}$/);
      const blob = Buffer.from(Buffer.from(data, 'base64').toString().split(' ')[1] as string, 'base64');
      const { createHash } = await import('node:crypto');
      expect(res.body.fingerprint.replaceAll(':', '')).to.equal(createHash('md5').update(blob).digest('hex'));
      expect(res.body).to.include({ data, name: 'laptop', username: '^root$', tenant_id: owner.tenant });
      expect(res.body.filter).to.deep.equal({ hostname: '.*' });
      const list = await call('GET', '/api/sshkeys/public-keys');
      expect(list.headers.get('x-total-count')).to.equal('1');
      expect(list.body[0].fingerprint).to.equal(res.body.fingerprint);
    });

    it('requires data, filter, name and username', async () => {
      const res = await call('POST', '/api/sshkeys/public-keys', {});
      expect(res.status).to.equal(400);
      expect(res.body).to.have.members(['data', 'filter', 'name', 'username']);
    });

    it('answers 422 for data that is not a public key, 409 for a key already registered', async () => {
      const bad = await call('POST', '/api/sshkeys/public-keys', {
        data: Buffer.from('ssh-ed25519 AAAAnotakey').toString('base64'),
        name: 'bad',
        username: '.*',
        filter: { hostname: '.*' },
      });
      expect(bad.status).to.equal(422);
      const data = keyData();
      const body = { data, name: 'twice', username: '.*', filter: { tags: ['prod'] } };
      expect((await call('POST', '/api/sshkeys/public-keys', body)).status).to.equal(200);
      const again = await call('POST', '/api/sshkeys/public-keys', body);
      expect(again.status).to.equal(409);
      expect(again.body).to.deep.equal(['fingerprint']);
    });

    it('refuses invalid regular expressions and tag lists', async () => {
      const badRe = await call('POST', '/api/sshkeys/public-keys', {
        data: keyData(),
        name: 'x',
        username: '(unclosed',
        filter: { hostname: '.*' },
      });
      expect(badRe.status).to.equal(400);
      expect(badRe.body).to.deep.equal(['username']);
      const tooMany = await call('POST', '/api/sshkeys/public-keys', {
        data: keyData(),
        name: 'x',
        username: '.*',
        filter: { tags: ['aaa', 'bbb', 'ccc', 'ddd'] },
      });
      expect(tooMany.status).to.equal(400);
      const dup = await call('POST', '/api/sshkeys/public-keys', {
        data: keyData(),
        name: 'x',
        username: '.*',
        filter: { tags: ['aaa', 'aaa'] },
      });
      expect(dup.status).to.equal(400);
    });

    it('updates, tags and deletes a key by fingerprint', async () => {
      const created = await call('POST', '/api/sshkeys/public-keys', {
        data: keyData(),
        name: 'tagged',
        username: '.*',
        filter: { hostname: '^web-' },
      });
      const fp = created.body.fingerprint as string;
      const renamed = await call('PUT', `/api/sshkeys/public-keys/${fp}`, {
        name: 'renamed',
        username: '^deploy$',
      });
      expect(renamed.body).to.include({ name: 'renamed', username: '^deploy$' });
      expect(
        (await call('POST', `/api/sshkeys/public-keys/${fp}/tags`, { tag: 'one' })).body.filter,
      ).to.deep.equal({
        tags: ['one'],
      });
      expect((await call('POST', `/api/sshkeys/public-keys/${fp}/tags`, { tag: 'one' })).status).to.equal(
        409,
      );
      const three = await call('PUT', `/api/sshkeys/public-keys/${fp}/tags`, {
        tags: ['one', 'two', 'three'],
      });
      expect(three.body.filter).to.deep.equal({ tags: ['one', 'two', 'three'] });
      expect((await call('POST', `/api/sshkeys/public-keys/${fp}/tags`, { tag: 'four' })).status).to.equal(
        406,
      );
      const two = await call('DELETE', `/api/sshkeys/public-keys/${fp}/tags/two`);
      expect(two.body.filter).to.deep.equal({ tags: ['one', 'three'] });
      expect((await call('DELETE', `/api/sshkeys/public-keys/${fp}/tags/absent`)).status).to.equal(404);
      expect((await call('DELETE', `/api/sshkeys/public-keys/${fp}`)).status).to.equal(200);
      expect((await call('DELETE', `/api/sshkeys/public-keys/${fp}`)).status).to.equal(404);
    });
  });

  describe('POST /api/auth/ssh', () => {
    let deviceToken: string;
    let deviceUid: string;
    before(async () => {
      const res = await server.api(
        'POST',
        '/api/devices/auth',
        agentAuthRequest({
          tenant: owner.tenant,
          hostname: 'signer',
          mac: '02:00:00:00:09:09',
          keyLabel: 'signer',
        }),
      );
      expect(res.status).to.equal(200);
      deviceToken = res.body.token;
      deviceUid = res.body.uid;
    });

    it('signs, once, the blob the gateway signed to sign in to the calling device', async () => {
      const signer = server.kernel.container.cradle.gatewaySigner;
      const gatewayKey = ssh2.utils.parseKey(
        server.kernel.container.cradle.keys.gatewayKey,
      ) as ssh2.ParsedKey;
      const blob = Buffer.concat([
        Buffer.from([0, 0, 0, 32]),
        Buffer.alloc(32, 7),
        Buffer.from([50, 1, 2, 3]),
      ]);
      // What the gateway's ssh2 client does when it signs in to this device with its key.
      const signed = await new Promise<Buffer>((resolve, reject) =>
        signer
          .agentFor(deviceUid)
          .sign(gatewayKey.getPublicSSH(), blob, {}, (err, sig) =>
            err || !sig ? reject(err) : resolve(sig),
          ),
      );
      const ask = () =>
        server.api('POST', '/api/auth/ssh', {
          token: deviceToken,
          body: { fingerprint: signer.fingerprint, data: blob.toString('base64') },
        });
      const res = await ask();
      expect(res.status).to.equal(200);
      expect(gatewayKey.verify(blob, Buffer.from(res.body.signature, 'base64'))).to.equal(true);
      expect(Buffer.from(res.body.signature, 'base64').equals(signed)).to.equal(true);
      expect((await ask()).status).to.equal(403);
    });

    it('refuses another key, a blob that is not a sign-in, a blob the gateway did not sign, and user tokens', async () => {
      const signer = server.kernel.container.cradle.gatewaySigner;
      const blob = Buffer.concat([
        Buffer.from([0, 0, 0, 32]),
        Buffer.alloc(32, 7),
        Buffer.from([50]),
      ]).toString('base64');
      const other = await server.api('POST', '/api/auth/ssh', {
        token: deviceToken,
        body: { fingerprint: '00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff', data: blob },
      });
      expect(other.status).to.equal(404);
      const notSignIn = await server.api('POST', '/api/auth/ssh', {
        token: deviceToken,
        body: { fingerprint: signer.fingerprint, data: Buffer.from('hello').toString('base64') },
      });
      expect(notSignIn.status).to.equal(403);
      const unsigned = await server.api('POST', '/api/auth/ssh', {
        token: deviceToken,
        body: { fingerprint: signer.fingerprint, data: blob },
      });
      expect(unsigned.status).to.equal(403);
      const user = await call('POST', '/api/auth/ssh', { fingerprint: signer.fingerprint, data: blob });
      expect(user.status).to.equal(403);
      expect(
        (await server.api('POST', '/api/auth/ssh', { body: { fingerprint: signer.fingerprint, data: blob } }))
          .status,
      ).to.equal(401);
    });
  });

  describe('firewall rules', () => {
    it('creates, lists by priority, reads, updates, tags and deletes rules', async () => {
      const a = await call('POST', '/api/firewall/rules', {
        action: 'deny',
        priority: 20,
        source_ip: '.*',
        username: '.*',
        filter: { hostname: '.*' },
      });
      expect(a.status).to.equal(200);
      expect(a.body).to.include({ action: 'deny', priority: 20, active: true, tenant_id: owner.tenant });
      expect(a.body.id).to.match(/^[0-9a-f]{24}$/);
      const b = await call('POST', '/api/firewall/rules', {
        action: 'allow',
        priority: 10,
        active: false,
        source_ip: '^10\\.',
        username: '^root$',
        filter: { tags: ['lab'] },
      });
      const list = await call('GET', '/api/firewall/rules');
      expect(list.headers.get('x-total-count')).to.equal('2');
      expect(list.body.map((r: { id: string }) => r.id)).to.deep.equal([b.body.id, a.body.id]);
      expect((await call('GET', `/api/firewall/rules/${b.body.id}`)).body.filter).to.deep.equal({
        tags: ['lab'],
      });
      const updated = await call('PUT', `/api/firewall/rules/${a.body.id}`, { priority: 1, action: 'allow' });
      expect(updated.body).to.include({ priority: 1, action: 'allow' });
      expect(
        (await call('POST', `/api/firewall/rules/${b.body.id}/tags`, { tag: 'edge' })).body.filter,
      ).to.deep.equal({
        tags: ['lab', 'edge'],
      });
      expect(
        (await call('DELETE', `/api/firewall/rules/${b.body.id}/tags`, { tag: 'lab' })).body.filter,
      ).to.deep.equal({
        tags: ['edge'],
      });
      expect(
        (await call('DELETE', `/api/firewall/rules/${b.body.id}/tags`, { tag: 'edge' })).status,
      ).to.equal(406);
      expect(
        (await call('PUT', `/api/firewall/rules/${b.body.id}/tags`, { tags: ['x1x', 'y1y'] })).body.filter,
      ).to.deep.equal({
        tags: ['x1x', 'y1y'],
      });
      expect((await call('DELETE', `/api/firewall/rules/${a.body.id}`)).status).to.equal(200);
      expect((await call('GET', `/api/firewall/rules/${a.body.id}`)).status).to.equal(404);
    });

    it('names invalid fields: action, priority, regular expressions', async () => {
      const res = await call('POST', '/api/firewall/rules', {
        action: 'maybe',
        priority: -1,
        source_ip: '.*',
        username: '.*',
        filter: { hostname: '.*' },
      });
      expect(res.status).to.equal(400);
      expect(res.body).to.include.members(['action', 'priority']);
      const re = await call('POST', '/api/firewall/rules', {
        action: 'deny',
        priority: 1,
        source_ip: '[',
        username: '(?<=x)y',
        filter: { hostname: '.*' },
      });
      expect(re.status).to.equal(400);
      expect(re.body).to.have.members(['source_ip', 'username']);
    });
  });

  describe('sessions', () => {
    it('lists none at first, answers 404 for an unknown session, and records only with recording on', async () => {
      const list = await call('GET', '/api/sessions');
      expect(list.status).to.equal(200);
      expect(list.headers.get('x-total-count')).to.equal('0');
      expect((await call('GET', `/api/sessions/${'a'.repeat(64)}`)).status).to.equal(404);
      expect((await call('GET', '/api/sessions/nope')).status).to.equal(400);

      const sessions = server.kernel.container.resolve('sessions' as never) as {
        open(s: Record<string, unknown>): Promise<string>;
      };
      // The device carrying the session is the one that may add to its recording.
      const device = await server.api(
        'POST',
        '/api/devices/auth',
        agentAuthRequest({
          tenant: owner.tenant,
          hostname: 'recorder',
          mac: '02:00:00:00:09:0a',
          keyLabel: 'recorder',
        }),
      );
      expect(device.status).to.equal(200);
      const uid = await sessions.open({
        tenantId: owner.tenant,
        deviceUid: device.body.uid,
        username: 'root',
        ip: '10.0.0.1',
        type: 'web',
        recorded: false,
      });
      const record = (body: unknown) =>
        server.api('POST', `/api/sessions/${uid}/records/0`, { token: device.body.token, body });
      const entry = { uid, seat: 0, message: 'hello\r\n', width: 80, height: 24 };
      expect(
        (await call('PUT', `/api/users/security/${owner.tenant}`, { session_record: false })).body,
      ).to.equal(false);
      expect((await call('GET', '/api/users/security')).body).to.equal(false);
      expect((await record(entry)).status).to.equal(422);
      expect(
        (await call('PUT', `/api/users/security/${owner.tenant}`, { session_record: true })).body,
      ).to.equal(true);
      expect((await record(entry)).status).to.equal(200);
      const got = await call('GET', `/api/sessions/${uid}/records/0`);
      expect(got.body).to.have.length(1);
      expect(got.body[0]).to.include({
        uid,
        seat: 0,
        message: 'hello\r\n',
        width: 80,
        height: 24,
        tenant_id: owner.tenant,
      });

      // Only the gateway marks a session authenticated: over the internal listener.
      const marked = await fetch(`${server.kernel.internalUrl}/api/sessions/${uid}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ authenticated: true }),
      });
      expect(await marked.json()).to.include({
        authenticated: true,
        recorded: true,
        type: 'web',
        active: true,
      });
      expect((await call('POST', `/api/sessions/${uid}/close`, { device: 'c'.repeat(64) })).status).to.equal(
        404,
      );
      expect((await call('POST', `/api/sessions/${uid}/close`, { device: device.body.uid })).status).to.equal(
        200,
      );
      expect((await call('GET', `/api/sessions/${uid}`)).body.active).to.equal(false);
    });
  });
});
