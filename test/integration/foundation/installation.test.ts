import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Installation, Kernel } from '@gatehouse/core';
import { ConfigError } from '@gatehouse/core/config/load';
import { pluginResolver } from '@gatehouse/server';
import { expect } from 'chai';

/**
 * The kernel is a library its host configures: it reads the configuration from the folder the host names, knows
 * only the editions the host lists, publishes the documents of the editions the host says, serves the console the
 * host points it at, and reports the host's version. Nothing of the repository's own layout is assumed.
 */
describe('a kernel in an installation its host describes', function () {
  this.timeout(60_000);
  let dir: string;
  let installation: Installation;
  let kernel: Kernel | undefined;

  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'gh-installation-'));
    const config = path.join(dir, 'settings');
    const console = path.join(dir, 'console');
    mkdirSync(config);
    mkdirSync(console);
    writeFileSync(
      path.join(config, 'default.yaml'),
      [
        'edition: base',
        'dataDir: ./data',
        'http: { host: 127.0.0.1, port: 0, bodyLimit: 1048576, trustProxy: false, corsOrigins: "" }',
        'internal: { host: 127.0.0.1, port: 0 }',
        'ssh: { host: 127.0.0.1, port: 0, preAuthTimeout: 30, idleTimeout: 0, maxStartups: "64:30:256",',
        '  perSourceMaxStartups: 32, terminalTicketsPerMinute: 20, refusedSessionsPerMinute: 10,',
        '  penalties: { authFail: 5, preAuthTimeout: 10, min: 15, max: 600, exempt: [], targetAuthFail: 2, targetMin: 60 } }',
        'database: { poolMax: 2, connectTimeout: 5, queryTimeout: 15 }',
        'redis: { keyPrefix: "installation-test:" }',
        'smtp: { from: "Gatehouse <gatehouse@localhost>" }',
        'tunnels: {}',
        'auth: { tokenTtl: 3600, lockoutThreshold: 3, lockoutMaxMinutes: 60, hashConcurrency: 0, hashQueue: -1,',
        '  loginFailuresPerSource: 30, loginWindowSeconds: 300 }',
        'metrics: {}',
        'secrets: {}',
        'limits: { maxDevices: -1, maxNamespaces: -1, pendingDevices: 100, registrationsPerMinute: 20,',
        '  pendingPerSource: 10, pendingPerBlock: 25 }',
        'log: { level: silent, pretty: false }',
        'heapGrowingPercent: 0',
        'cloudUrl: https://cloud.example.org',
        'pluginConfig: {}',
        '',
      ].join('\n'),
    );
    writeFileSync(path.join(config, 'base.yaml'), 'plugins: [community]\n');
    writeFileSync(path.join(console, 'index.html'), '<!doctype html><title>the host console</title>\n');
    installation = {
      configDir: config,
      editions: ['base'],
      publishedEditions: ['base'],
      consoleDir: console,
      version: '9.8.7',
    };
  });

  after(async () => {
    await kernel?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses an edition its host does not list, naming the ones it does', async () => {
    const refused = await Kernel.create({
      installation,
      resolvePlugin: pluginResolver({}),
      env: { GATEHOUSE_EDITION: 'community' },
    }).catch((err: unknown) => err);
    expect(refused).to.be.instanceOf(ConfigError);
    expect((refused as Error).message).to.equal(
      'config: edition (GATEHOUSE_EDITION) must be one of base; got "community"',
    );
  });

  it("serves the host's console, its published document and its version", async () => {
    kernel = await Kernel.create({
      installation,
      resolvePlugin: pluginResolver({}),
      env: {},
      memoryDb: true,
      ssh: false,
      overrides: { dataDir: path.join(dir, 'data') },
    });
    await kernel.start();
    expect(kernel.config.edition).to.equal('base');
    expect(kernel.plugins.map((p) => p.name)).to.deep.equal(['community']);

    const page = await fetch(`${kernel.httpUrl}/`, { headers: { accept: 'text/html' } });
    expect(page.status).to.equal(200);
    expect(await page.text()).to.include('the host console');
    // A console route the shell handles itself gets the same page.
    const deep = await fetch(`${kernel.httpUrl}/devices/pending`, { headers: { accept: 'text/html' } });
    expect(await deep.text()).to.include('the host console');

    const info = (await (await fetch(`${kernel.httpUrl}/info`)).json()) as { version: string };
    expect(info.version).to.equal('9.8.7');

    const document = await fetch(`${kernel.httpUrl}/openapi/base.json`);
    expect(document.status).to.equal(200);
    const body = (await document.json()) as { info: { title: string; version: string } };
    expect(body.info.title).to.equal('Gatehouse API (base edition)');
    expect(body.info.version).to.equal('9.8.7');
    // The repository's editions are not this installation's.
    expect((await fetch(`${kernel.httpUrl}/openapi/community.json`)).status).to.equal(404);
  });
});
