import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { serverImageFile } from '../../packaging/release/images';
import { composeFile } from '../../packaging/release/layout';
import type { Podman } from '../../packaging/release/podman';
import { freePort } from '../support/process-server';
import { documented } from './documented';
import { artifact, podmanFor, version } from './release';
import { ensureServiceImages } from './service-images';

/**
 * The compose route of the getting-started page: `podman-compose up -d` in a folder holding the repository's
 * compose.yaml starts PostgreSQL, Redis and the server image; the server migrates the database on start, its first
 * user is made with its own command, and signs in through the published port; `podman-compose down` stops all.
 */
describe('the compose stack (packaging/compose/compose.yaml) under podman-compose', function () {
  this.timeout(300_000);
  let dir: string;
  let podman: Podman;
  let env: Record<string, string>;
  let url: string;
  /** A command run in the compose file's folder, as the page says. */
  const sh = (command: string) =>
    execFileSync('sh', ['-c', command], {
      cwd: path.join(dir, 'gatehouse'),
      env: { ...process.env, ...env },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 240_000,
    });

  before(async function () {
    if (!existsSync('/usr/bin/podman-compose')) this.skip(); // scripts/test-tools.mjs installs it
    dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-compose-'));
    const store = podmanFor(path.join(dir, 'podman'));
    podman = store.podman;
    const [http, ssh] = [await freePort(), await freePort()];
    url = `http://127.0.0.1:${http}`;
    env = {
      ...store.env,
      GATEHOUSE_HTTP_PUBLISH: String(http),
      GATEHOUSE_SSH_PUBLISH: String(ssh),
      GATEHOUSE_PUBLIC_URL: url,
    };
    await ensureServiceImages(podman);
    await podman('load', '-i', artifact(serverImageFile(version)));
    // docs: the compose file from the release's source (packaging/compose/compose.yaml) in a folder of its own.
    execFileSync('mkdir', ['-p', path.join(dir, 'gatehouse')]);
    cpSync(composeFile, path.join(dir, 'gatehouse', 'compose.yaml'));
  });
  after(async () => {
    if (!dir) return;
    try {
      sh('podman-compose down -v');
    } catch {
      // not up
    }
    await podman?.('system', 'reset', '--force').catch(() => undefined);
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  });

  it('starts PostgreSQL, Redis and the server, which migrates the database and serves this version', async () => {
    sh(documented.composeUp);
    const deadline = Date.now() + 180_000;
    let ready = false;
    while (!ready) {
      ready = await fetch(`${url}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (!ready && Date.now() > deadline) {
        throw new Error(`the stack did not become ready:\n${sh('podman-compose logs 2>&1')}`);
      }
      if (!ready) await new Promise((r) => setTimeout(r, 1000));
    }
    const info = (await (await fetch(`${url}/info`)).json()) as { version: string };
    expect(info.version).to.equal(version);
    // The store is the compose file's PostgreSQL, not the embedded one: its tables are there.
    const tables = await podman(
      'exec',
      'gatehouse_postgres_1',
      'psql',
      '-U',
      'gatehouse',
      '-d',
      'gatehouse',
      '-tAc',
      "select count(*) from information_schema.tables where table_name = 'gatehouse_migrations'",
    );
    expect(tables.trim()).to.equal('1');
  });

  it('makes the first user with the server container, who signs in through the published port', async () => {
    sh(documented.composeFirstUser);
    const login = await fetch(`${url}/api/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ username: 'ada', password: 'change-me-now' }),
    });
    expect(login.status).to.equal(200);
    expect(((await login.json()) as { token: string }).token).to.be.a('string');
  });

  it('stops the stack with podman-compose down', async () => {
    sh(documented.composeDown);
    expect(await podman('ps', '-a', '--format', '{{.Names}}')).to.equal('');
  });
});
