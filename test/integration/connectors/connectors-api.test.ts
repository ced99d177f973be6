import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect as connect_ } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { expect } from 'chai';
import { STATUS } from '../../../plugins/enterprise/connectors/engine';
import {
  connectEngine,
  connectorState,
  engineAddress,
  type RunningConnector,
  startConnectorProcess,
} from '../../support/connector';
import { type PodmanEngine, startPodman } from '../../support/podman';
import { type LoginAnswer, startServer, type TestServer } from '../../support/server';

/** A port nothing listens on: bound and closed by the kernel just now would do, 1 is simpler and never served. */
const CLOSED_PORT = 1;

/**
 * The `/api/connector` calls against a real engine (podman's Docker-compatible API) reached the way a user sets it
 * up: a connector is made through the API, its token runs `gatehouse-agent connector` beside the engine, and the
 * server reaches the engine through that process only. Writes answer 200 when the engine answered and 201 when
 * the connector was saved without it, `info` is the engine's own object, and the TLS material is sealed at rest.
 */
describe('connectors: the API against podman, through a connector process', function () {
  this.timeout(120_000);
  let engine: PodmanEngine;
  let server: TestServer;
  let me: LoginAnswer;
  const running: RunningConnector[] = [];
  const api = (method: string, path: string, body?: unknown) =>
    server.api(method, path, { token: me.token, body });
  const connect = async (body: Record<string, unknown> = {}, where = engineAddress(engine)) => {
    const c = await connectEngine(server, api, where, body);
    running.push(c);
    return c;
  };

  before(async () => {
    engine = await startPodman();
    server = await startServer({ edition: 'enterprise', ssh: false });
    me = await server.setup();
  });
  after(async () => {
    for (const c of running) await c.stop();
    await server?.stop();
    await engine?.close();
  });

  it('makes a connector with its token, answered once, and says it waits for its process', async () => {
    const res = await api('POST', '/api/connector', { enable: false });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.body).to.include({ address: '', port: 0, secure: false, enable: false, tenant_id: me.tenant });
    expect(res.body.token).to.match(new RegExp(`^${res.body.uid}\\.[A-Za-z0-9_-]{43}$`));
    expect(res.body.status).to.deep.equal({ State: 'disconnected', Message: STATUS.waiting });
    const again = await api('GET', `/api/connector/${res.body.uid}`);
    expect(again.body).to.not.have.property('token');
    const { token, ...rest } = res.body;
    expect(again.body).to.deep.equal(rest);
    // Only the SHA-256 of the secret is kept.
    const row = await server.kernel.container.cradle
      .db('connectors')
      .where({ uid: res.body.uid })
      .first('token_hash');
    const secret = String(token).split('.')[1] as string;
    expect(row.token_hash).to.equal(createHash('sha256').update(secret).digest('hex'));
    expect(JSON.stringify(row)).to.not.contain(secret);
  });

  it('connects once its process dials in, and shows where that process reaches its engine', async () => {
    const c = await connect({ enable: false });
    const status = await connectorState(api, c.uid, 'connected');
    expect(status.Message).to.match(/^Podman Engine 4\./);
    const got = await api('GET', `/api/connector/${c.uid}`);
    expect(got.body).to.include({ address: '127.0.0.1', port: engine.port });
    // A write while connected asks the engine again: 200.
    const patched = await api('PATCH', `/api/connector/${c.uid}`, { enable: false });
    expect(patched.status, JSON.stringify(patched.body)).to.equal(200);
    expect(patched.body.status.State).to.equal('connected');
  });

  it('answers the engine’s own information object through the connector, 424 without one', async () => {
    const c = await connect({ enable: false });
    await connectorState(api, c.uid, 'connected');
    const info = await api('GET', `/api/connector/${c.uid}/info`);
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

    const away = await api('POST', '/api/connector', { enable: false });
    const failed = await api('GET', `/api/connector/${away.body.uid}/info`);
    expect(failed.status).to.equal(424);
    expect(failed.body.message).to.equal(STATUS.offline);
  });

  it('says its process cannot reach the engine in its own words, not the network’s', async () => {
    const c = await connect({}, `tcp://127.0.0.1:${CLOSED_PORT}`);
    const status = await connectorState(api, c.uid, 'disconnected', STATUS.unreachable);
    const info = await api('GET', `/api/connector/${c.uid}/info`);
    expect(info.status).to.equal(424);
    expect(info.body.message).to.equal(STATUS.unreachable);
    expect(JSON.stringify([status, info.body])).to.not.match(/ECONNREFUSED|127\.0\.0\.1|connect /);
  });

  it('refuses an old token once a new one is made, and takes the new one', async () => {
    const c = await connect({ enable: false });
    await connectorState(api, c.uid, 'connected');
    const rotated = await api('POST', `/api/connector/${c.uid}/token`);
    expect(rotated.status).to.equal(200);
    expect(rotated.body.token)
      .to.match(new RegExp(`^${c.uid}\\.`))
      .and.not.equal(c.token);
    // The process with the old token is disconnected and refused.
    await c.process.waitFor(/refused this connector \(401\)/);
    await connectorState(api, c.uid, 'disconnected', STATUS.offline);
    const fresh = await startConnectorProcess({
      server: server.url,
      token: rotated.body.token,
      engine: engineAddress(engine),
    });
    running.push({ ...c, process: fresh, stop: async () => void (await fresh.stop()) });
    await connectorState(api, c.uid, 'connected');
  });

  it('lists with enable, page and per_page, the total in X-Total-Count', async () => {
    await api('POST', '/api/connector', { enable: false });
    await api('POST', '/api/connector', {});
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
    for (const c of all.body) expect(c).to.not.have.property('token');
  });

  it('deletes a connector, and its process is refused from then on', async () => {
    const c = await connect({ enable: false });
    expect((await api('DELETE', `/api/connector/${c.uid}`)).status).to.equal(200);
    expect((await api('GET', `/api/connector/${c.uid}`)).status).to.equal(404);
    expect((await api('DELETE', `/api/connector/${c.uid}`)).status).to.equal(404);
    await c.process.waitFor(/refused this connector \(401\)/);
  });

  it('refuses bad input naming the fields, and takes no address to connect to', async () => {
    const addressed = await api('POST', '/api/connector', { address: '127.0.0.1', port: 2375 });
    expect(addressed.status).to.equal(400);
    const notPem = await api('POST', '/api/connector', {
      secure: true,
      tls: { ca: '-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n' },
    });
    expect(notPem.status).to.equal(400);
    expect(notPem.body).to.deep.equal(['tls.ca']);
    const stray = await api('POST', '/api/connector', { extra: 1 });
    expect(stray.status).to.equal(400);
    expect((await api('GET', '/api/connector/not-a-uuid')).status).to.equal(400);
    const made = await api('POST', '/api/connector', { enable: false });
    expect((await api('PATCH', `/api/connector/${made.body.uid}`, { port: 1 })).status).to.equal(400);
  });

  it('keeps another namespace’s connectors out of reach', async () => {
    const mine = await api('POST', '/api/connector', { enable: false });
    const ns = await api('POST', '/api/namespaces', { name: 'elsewhere' });
    const other = (await api('GET', `/api/auth/token/${ns.body.tenant_id}`)).body as LoginAnswer;
    const as = (method: string, path: string, body?: unknown) =>
      server.api(method, path, { token: other.token, body });
    expect((await as('GET', '/api/connector')).body).to.deep.equal([]);
    for (const [method, path, body] of [
      ['GET', `/api/connector/${mine.body.uid}`],
      ['GET', `/api/connector/${mine.body.uid}/info`],
      ['PATCH', `/api/connector/${mine.body.uid}`, { enable: true }],
      ['POST', `/api/connector/${mine.body.uid}/token`],
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
  const running: RunningConnector[] = [];
  const api = (method: string, p: string, body?: unknown) => server.api(method, p, { token: me.token, body });
  /** A connector process beside the TLS engine, for a connector made with `body`. */
  const connect = async (body: Record<string, unknown>) => {
    const c = await connectEngine(server, api, `tcp://127.0.0.1:${port}`, body);
    running.push(c);
    return c;
  };

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-engine-tls-'));
    pki = makeCertificates(dir);
    engine = await startPodman();
    proxy = createTlsServer(
      { key: pki.serverKey, cert: pki.serverCert, ca: pki.ca, requestCert: true, rejectUnauthorized: true },
      (socket) => {
        const upstream = connect_(engine.port, '127.0.0.1');
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
    for (const c of running) await c.stop();
    await server?.stop();
    if (proxy) await new Promise((resolve) => proxy.close(resolve));
    await engine?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('speaks TLS with the CA and a client certificate end to end, and seals them at rest', async () => {
    const c = await connect({
      secure: true,
      enable: false,
      tls: { ca: pki.ca, cert: pki.cert, key: pki.key },
    });
    const status = await connectorState(api, c.uid, 'connected');
    expect(status.Message).to.match(/^Podman Engine/);
    const res = await api('GET', `/api/connector/${c.uid}`);
    // The key is write-only; the certificates are answered.
    expect(res.body.tls).to.deep.equal({ ca: pki.ca, cert: pki.cert });
    expect(JSON.stringify(res.body)).to.not.contain('PRIVATE KEY');
    const info = await api('GET', `/api/connector/${c.uid}/info`);
    expect(info.status).to.equal(200);
    expect(info.body.ServerVersion).to.be.a('string');

    const row = await server.kernel.container.cradle.db('connectors').where({ uid: c.uid }).first('tls');
    expect(row.tls).to.match(/^gh1:/);
    for (const plain of ['BEGIN', pki.key.split('\n')[1] as string, pki.cert.split('\n')[1] as string])
      expect(row.tls).to.not.contain(plain);
  });

  it('answers 201 when the engine refuses the connection without a client certificate', async () => {
    const c = await connect({ secure: true, enable: false, tls: { ca: pki.ca } });
    const again = await api('PATCH', `/api/connector/${c.uid}`, { enable: false });
    expect(again.status, JSON.stringify(again.body)).to.equal(201);
    expect(again.body.status.State).to.equal('disconnected');
    expect(again.body.status.Message).to.equal(STATUS.tls);
    // Without the CA, the engine's certificate is not trusted.
    const untrusted = await api('PATCH', `/api/connector/${c.uid}`, {
      tls: { cert: pki.cert, key: pki.key },
    });
    expect(untrusted.status).to.equal(201);
    expect(untrusted.body.status.Message).to.equal(STATUS.tls);
    // All three: connected.
    const ok = await api('PATCH', `/api/connector/${c.uid}`, {
      tls: { ca: pki.ca, cert: pki.cert, key: pki.key },
    });
    expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
  });

  it('refuses a key that is not the certificate’s', async () => {
    const res = await api('POST', '/api/connector', {
      secure: true,
      tls: { ca: pki.ca, cert: pki.cert, key: pki.serverKey },
    });
    expect(res.status).to.equal(400);
    expect(res.body).to.deep.equal(['tls.key']);
    const half = await api('POST', '/api/connector', { secure: true, tls: { cert: pki.cert } });
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
