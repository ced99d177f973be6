import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createKernel } from '@gatehouse/server';
import { expect } from 'chai';
import { dropDatabase, freshDatabase } from '../../support/server';

function kernelOptions(dataDir: string, databaseUrl: string | undefined) {
  return {
    env: {},
    overrides: {
      dataDir,
      http: { port: 0, host: '127.0.0.1' },
      ssh: { port: 0, host: '127.0.0.1' },
      log: { level: (process.env.TEST_LOG_LEVEL ?? 'silent') as 'silent', pretty: false },
      ...(databaseUrl ? { database: { url: databaseUrl, poolMax: 4 } } : {}),
    },
  };
}

/** Reads the SSH identification line the gateway sends on connect. */
function sshBanner(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = createConnection(port, '127.0.0.1');
    sock.once('data', (d) => {
      resolve(d.toString().split('\r\n')[0] ?? '');
      sock.destroy();
    });
    sock.once('error', reject);
  });
}

describe('kernel lifecycle', () => {
  let dataDir: string;
  let databaseUrl: string | undefined;
  beforeEach(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'gh-life-'));
    databaseUrl = await freshDatabase();
  });
  afterEach(async () => {
    await dropDatabase(databaseUrl);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps its keys and data across a restart (embedded store on disk, or PostgreSQL)', async () => {
    const first = await createKernel(kernelOptions(dataDir, databaseUrl));
    await first.start();
    const keys = first.container.cradle.keys;
    expect(await sshBanner(first.sshPort)).to.match(/^SSH-2\.0-Gatehouse/);
    await first.stop();

    const second = await createKernel(kernelOptions(dataDir, databaseUrl));
    await second.start();
    try {
      const again = second.container.cradle.keys;
      expect(again.sshHostKey).to.equal(keys.sshHostKey);
      expect(again.gatewayKey).to.equal(keys.gatewayKey);
      expect(again.secret.equals(keys.secret)).to.equal(true);
      const token = await first.container.cradle.tokens.sign({ kind: 'device', sub: 'x', tenant: 't' });
      expect((await second.container.cradle.tokens.verify(token)).sub).to.equal('x');
    } finally {
      await second.stop();
    }
  });

  it('runs two kernels in one process without sharing state', async () => {
    const otherDir = mkdtempSync(path.join(tmpdir(), 'gh-life-'));
    const otherDb = await freshDatabase();
    const a = await createKernel(kernelOptions(dataDir, databaseUrl));
    const b = await createKernel(kernelOptions(otherDir, otherDb));
    await Promise.all([a.start(), b.start()]);
    try {
      expect(a.httpPort).to.not.equal(b.httpPort);
      expect(a.container.cradle.keys.sshHostKey).to.not.equal(b.container.cradle.keys.sshHostKey);
      const [ra, rb] = await Promise.all([fetch(`${a.httpUrl}/healthz`), fetch(`${b.httpUrl}/healthz`)]);
      expect([ra.status, rb.status]).to.deep.equal([200, 200]);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
      await dropDatabase(otherDb);
      rmSync(otherDir, { recursive: true, force: true });
    }
  });

  it('lets an in-flight request finish when it stops, then closes the listeners', async () => {
    const k = await createKernel(kernelOptions(dataDir, databaseUrl));
    await k.start();
    const url = k.httpUrl;
    // A login spends a full password hash: it is still running when stop begins.
    const inflight = fetch(`${url}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'nobody', password: 'whatever' }),
    });
    await new Promise((r) => setTimeout(r, 20));
    await k.stop();
    const res = await inflight;
    expect(res.status).to.equal(401);
    let refused = false;
    try {
      await fetch(`${url}/healthz`);
    } catch {
      refused = true;
    }
    expect(refused).to.equal(true);
  });
});
