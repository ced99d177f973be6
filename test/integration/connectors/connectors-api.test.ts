import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { expect } from 'chai';
import { type PodmanEngine, startPodman } from '../../support/podman';
import { type LoginAnswer, startServer, type TestServer } from '../../support/server';

/** A port nothing listens on: bound and closed by the kernel just now would do, 1 is simpler and never served. */
const CLOSED_PORT = 1;

/**
 * The `/api/connector` calls of SPEC.md section 7 against a real engine (podman's Docker-compatible API): writes
 * answer 200 when the engine answered and 201 when the connector was saved without it, `info` is the engine's
 * own object, and the TLS material is sealed at rest.
 */
describe('connectors: the API against podman', function () {
  this.timeout(120_000);
  let engine: PodmanEngine;
  let server: TestServer;
  let me: LoginAnswer;
  const api = (method: string, path: string, body?: unknown) =>
    server.api(method, path, { token: me.token, body });

  before(async () => {
    engine = await startPodman();
    server = await startServer({ edition: 'enterprise', ssh: false });
    me = await server.setup();
  });
  after(async () => {
    await server?.stop();
    await engine?.close();
  });

  it('saves a connector that reaches the engine with 200 and its status connected', async () => {
    const res = await api('POST', '/api/connector', { address: engine.address, port: engine.port });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body).to.include({ address: '127.0.0.1', port: engine.port, secure: false, enable: true });
    expect(res.body.tenant_id).to.equal(me.tenant);
    expect(res.body.status.State).to.equal('connected');
    expect(res.body.status.Message).to.match(/^Podman Engine 4\./);
    const again = await api('GET', `/api/connector/${res.body.uid}`);
    expect(again.status).to.equal(200);
    expect(again.body).to.deep.equal(res.body);
  });

  it('saves a connector whose engine does not answer with 201 and keeps the reason', async () => {
    const res = await api('POST', '/api/connector', {
      address: '127.0.0.1',
      port: CLOSED_PORT,
      enable: false,
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.body.status.State).to.equal('disconnected');
    expect(res.body.status.Message).to.match(/ECONNREFUSED/);
    const stored = await api('GET', `/api/connector/${res.body.uid}`);
    expect(stored.body.status).to.deep.equal(res.body.status);

    // Pointed at the engine, the same connector connects: 200.
    const fixed = await api('PATCH', `/api/connector/${res.body.uid}`, { port: engine.port });
    expect(fixed.status, JSON.stringify(fixed.body)).to.equal(200);
    expect(fixed.body).to.include({ port: engine.port, enable: false });
    expect(fixed.body.status.State).to.equal('connected');
    // And back to nowhere: 201 again, the port kept.
    const broken = await api('PATCH', `/api/connector/${res.body.uid}`, { port: CLOSED_PORT });
    expect(broken.status).to.equal(201);
    expect(broken.body.port).to.equal(CLOSED_PORT);
  });

  it('answers the engine’s own information object', async () => {
    const made = await api('POST', '/api/connector', { address: engine.address, port: engine.port });
    const info = await api('GET', `/api/connector/${made.body.uid}/info`);
    expect(info.status).to.equal(200);
    const direct = (await (await fetch(`http://127.0.0.1:${engine.port}/info`)).json()) as Record<
      string,
      unknown
    >;
    // podman makes up a new ID on every call; these say which engine answered.
    expect(info.body.ID).to.be.a('string');
    for (const key of ['Name', 'ServerVersion', 'Driver', 'DockerRootDir', 'OperatingSystem'])
      expect(info.body[key], key).to.be.a('string').and.equal(direct[key]);
    expect(Object.keys(info.body)).to.have.length.greaterThan(30);

    const away = await api('POST', '/api/connector', {
      address: '127.0.0.1',
      port: CLOSED_PORT,
      enable: false,
    });
    const failed = await api('GET', `/api/connector/${away.body.uid}/info`);
    expect(failed.status).to.equal(424);
    expect(failed.body.message).to.match(/ECONNREFUSED/);
  });

  it('lists with enable, page and per_page, the total in X-Total-Count', async () => {
    const all = await api('GET', '/api/connector?per_page=100');
    expect(all.status).to.equal(200);
    const total = Number(all.headers.get('x-total-count'));
    expect(total).to.equal(all.body.length).and.to.be.greaterThan(2);
    const enabled = await api('GET', '/api/connector?enable=true&per_page=100');
    const disabled = await api('GET', '/api/connector?enable=false&per_page=100');
    expect(enabled.body.every((c: { enable: boolean }) => c.enable)).to.equal(true);
    expect(disabled.body.every((c: { enable: boolean }) => !c.enable)).to.equal(true);
    expect(enabled.body.length + disabled.body.length).to.equal(total);
    expect(disabled.body.length).to.be.greaterThan(0);
    const page2 = await api('GET', '/api/connector?page=2&per_page=1');
    expect(page2.body).to.have.length(1);
    expect(page2.body[0].uid).to.equal(all.body[1].uid);
    expect((await api('GET', '/api/connector?per_page=101')).status).to.equal(400);
    expect((await api('GET', '/api/connector?enable=maybe')).status).to.equal(400);
  });

  it('deletes a connector', async () => {
    const made = await api('POST', '/api/connector', { address: engine.address, port: engine.port });
    expect((await api('DELETE', `/api/connector/${made.body.uid}`)).status).to.equal(200);
    expect((await api('GET', `/api/connector/${made.body.uid}`)).status).to.equal(404);
    expect((await api('DELETE', `/api/connector/${made.body.uid}`)).status).to.equal(404);
  });

  it('refuses bad input naming the fields', async () => {
    const bad = await api('POST', '/api/connector', { address: 'a b', port: 70000 });
    expect(bad.status).to.equal(400);
    expect(bad.body).to.have.members(['address', 'port']);
    const neg = await api('POST', '/api/connector', { address: 'engine', port: -1 });
    expect(neg.body).to.deep.equal(['port']);
    const notPem = await api('POST', '/api/connector', {
      address: 'engine',
      port: 2376,
      secure: true,
      tls: { ca: '-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n' },
    });
    expect(notPem.status).to.equal(400);
    expect(notPem.body).to.deep.equal(['tls.ca']);
    const stray = await api('POST', '/api/connector', { address: 'engine', port: 2375, extra: 1 });
    expect(stray.status).to.equal(400);
    expect((await api('GET', '/api/connector/not-a-uuid')).status).to.equal(400);
  });

  it('keeps another namespace’s connectors out of reach', async () => {
    const mine = await api('POST', '/api/connector', {
      address: engine.address,
      port: engine.port,
      enable: false,
    });
    const ns = await api('POST', '/api/namespaces', { name: 'elsewhere' });
    const other = (await api('GET', `/api/auth/token/${ns.body.tenant_id}`)).body as LoginAnswer;
    const as = (method: string, path: string, body?: unknown) =>
      server.api(method, path, { token: other.token, body });
    expect((await as('GET', '/api/connector')).body).to.deep.equal([]);
    for (const [method, path, body] of [
      ['GET', `/api/connector/${mine.body.uid}`],
      ['GET', `/api/connector/${mine.body.uid}/info`],
      ['PATCH', `/api/connector/${mine.body.uid}`, { enable: true }],
      ['DELETE', `/api/connector/${mine.body.uid}`],
    ] as const) {
      expect((await as(method, path, body)).status, `${method} ${path}`).to.equal(404);
    }
    expect((await api('GET', `/api/connector/${mine.body.uid}`)).body.enable).to.equal(false);
  });
});

/** A CA, a server certificate for 127.0.0.1 and a client certificate, made with openssl. */
function makeCertificates(dir: string) {
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  ssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=Test engine CA',
  );
  for (const [name, ext] of [
    ['server', 'subjectAltName=IP:127.0.0.1'],
    ['client', 'extendedKeyUsage=clientAuth'],
  ] as const) {
    ssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
      '-subj',
      `/CN=${name}`,
    );
    writeFileSync(path.join(dir, `${name}.ext`), `${ext}\n`);
    ssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      `${name}.pem`,
      '-days',
      '2',
      '-extfile',
      `${name}.ext`,
    );
  }
  const read = (f: string) => readFileSync(path.join(dir, f), 'utf8');
  return {
    ca: read('ca.pem'),
    serverCert: read('server.pem'),
    serverKey: read('server.key'),
    cert: read('client.pem'),
    key: read('client.key'),
  };
}

/**
 * The engine behind TLS with client certificates, as a Docker host with `--tlsverify` serves it: podman has no TLS
 * listener of its own, so a TLS server that asks for a client certificate signed by the CA passes the bytes on.
 */
describe('connectors: TLS to the engine', function () {
  this.timeout(120_000);
  let engine: PodmanEngine;
  let server: TestServer;
  let me: LoginAnswer;
  let proxy: TlsServer;
  let port: number;
  let dir: string;
  let pki: ReturnType<typeof makeCertificates>;
  const api = (method: string, p: string, body?: unknown) => server.api(method, p, { token: me.token, body });

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-engine-tls-'));
    pki = makeCertificates(dir);
    engine = await startPodman();
    proxy = createTlsServer(
      { key: pki.serverKey, cert: pki.serverCert, ca: pki.ca, requestCert: true, rejectUnauthorized: true },
      (socket) => {
        const upstream = connect(engine.port, '127.0.0.1');
        socket.pipe(upstream).pipe(socket);
        socket.on('error', () => upstream.destroy());
        upstream.on('error', () => socket.destroy());
      },
    );
    proxy.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    port = (proxy.address() as { port: number }).port;
    server = await startServer({ edition: 'enterprise', ssh: false });
    me = await server.setup();
  });
  after(async () => {
    await server?.stop();
    await new Promise((resolve) => proxy?.close(resolve));
    await engine?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('connects with the CA and a client certificate, and seals them at rest', async () => {
    const res = await api('POST', '/api/connector', {
      address: '127.0.0.1',
      port,
      secure: true,
      enable: false,
      tls: { ca: pki.ca, cert: pki.cert, key: pki.key },
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.status.Message).to.match(/^Podman Engine/);
    // The key is write-only; the certificates are answered.
    expect(res.body.tls).to.deep.equal({ ca: pki.ca, cert: pki.cert });
    expect(JSON.stringify(res.body)).to.not.contain('PRIVATE KEY');
    const info = await api('GET', `/api/connector/${res.body.uid}/info`);
    expect(info.status).to.equal(200);
    expect(info.body.ServerVersion).to.be.a('string');

    const row = await server.kernel.container.cradle
      .db('connectors')
      .where({ uid: res.body.uid })
      .first('tls');
    expect(row.tls).to.match(/^gh1:/);
    for (const plain of ['BEGIN', pki.key.split('\n')[1] as string, pki.cert.split('\n')[1] as string])
      expect(row.tls).to.not.contain(plain);
  });

  it('answers 201 when the engine refuses the connection without a client certificate', async () => {
    const res = await api('POST', '/api/connector', {
      address: '127.0.0.1',
      port,
      secure: true,
      enable: false,
      tls: { ca: pki.ca },
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.body.status.State).to.equal('disconnected');
    // Without the CA, the engine's certificate is not trusted.
    const untrusted = await api('PATCH', `/api/connector/${res.body.uid}`, {
      tls: { cert: pki.cert, key: pki.key },
    });
    expect(untrusted.status).to.equal(201);
    expect(untrusted.body.status.Message).to.match(/certificate/i);
    // All three: connected.
    const ok = await api('PATCH', `/api/connector/${res.body.uid}`, {
      tls: { ca: pki.ca, cert: pki.cert, key: pki.key },
    });
    expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
  });

  it('refuses a key that is not the certificate’s', async () => {
    const res = await api('POST', '/api/connector', {
      address: '127.0.0.1',
      port,
      secure: true,
      tls: { ca: pki.ca, cert: pki.cert, key: pki.serverKey },
    });
    expect(res.status).to.equal(400);
    expect(res.body).to.deep.equal(['tls.key']);
    const half = await api('POST', '/api/connector', {
      address: '127.0.0.1',
      port,
      secure: true,
      tls: { cert: pki.cert },
    });
    expect(half.body).to.deep.equal(['tls.key']);
  });
});

describe('connectors: only in the enterprise edition', function () {
  this.timeout(60_000);
  it('has no connector calls in community', async () => {
    const server = await startServer({ ssh: false });
    try {
      const me = await server.setup();
      const res = await server.api('GET', '/api/connector', { token: me.token });
      expect(res.status).to.equal(404);
      expect(server.kernel.routes.some((r) => r.path.startsWith('/api/connector'))).to.equal(false);
    } finally {
      await server.stop();
    }
  });
});
