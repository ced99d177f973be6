import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { definePlugin } from '@gatehouse/core';
import { ConfigError } from '@gatehouse/core/config/load';
import { createKernel, loadConfig, pluginResolver } from '@gatehouse/server';
import { expect } from 'chai';
import { startServer, type TestServer } from '../../support/server';

const run = promisify(execFile);
const bin = path.resolve('bin/gatehouse.js');
const fixtures = path.resolve('test/fixtures/plugins');
const quiet = { log: { level: 'silent' as const, pretty: false } };

/**
 * Editions are plain plugin lists (config/<edition>.yaml) and a self-hoster may run a custom one: community plus
 * an outside plugin, listed by path in the file GATEHOUSE_CONFIG names. The host loads each entry; `/info` names
 * the running plugins; `gatehouse openapi` documents every edition and a custom list.
 */
describe('editions and custom plugin lists', function () {
  this.timeout(180_000);
  let dir: string;
  let customConfig: string;
  before(() => {
    // The plugin sits beside the config file that lists it, as a self-hoster would keep it.
    dir = mkdtempSync(path.join(tmpdir(), 'gh-custom-'));
    cpSync(path.join(fixtures, 'greeting'), path.join(dir, 'greeting'), { recursive: true });
    customConfig = path.join(dir, 'gatehouse.yaml');
    writeFileSync(customConfig, 'plugins: [community, ./greeting]\n');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const edition of ['community', 'enterprise', 'cloud']) {
    it(`loads the ${edition} edition's list, in order`, async () => {
      const kernel = await createKernel({ env: {}, overrides: { edition, ...quiet } });
      const listed = loadConfig({}, { edition }).plugins;
      expect(listed).to.include(edition);
      expect(kernel.plugins.map((p) => p.name)).to.deep.equal(listed);
    });
  }

  describe('a custom list with an outside plugin', () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ ssh: false, env: { GATEHOUSE_CONFIG: customConfig } });
    });
    after(async () => server?.stop());

    it('runs it: /info names it and its route answers', async () => {
      const info = await server.api('GET', '/info');
      expect(info.body.plugins).to.deep.equal(['community', 'greeting']);
      const { token } = await server.setup();
      const hello = await server.api('GET', '/api/greeting?who=Ada', { token });
      expect(hello.status, JSON.stringify(hello.body)).to.equal(200);
      expect(hello.body).to.deep.equal({ text: 'hello Ada' });
      expect((await server.api('GET', '/api/greeting?who=Ada')).status, 'deny by default').to.equal(401);
      const bad = await server.api('GET', '/api/greeting?who=', { token });
      expect(bad.status, 'its schema validates like any route').to.equal(400);
    });
  });

  describe('the gatehouse command', () => {
    const gatehouse = async (env: NodeJS.ProcessEnv, ...args: string[]) => {
      const dataDir = mkdtempSync(path.join(tmpdir(), 'gh-custom-cli-'));
      try {
        const { stdout } = await run(process.execPath, [bin, ...args], {
          env: { PATH: process.env.PATH, GATEHOUSE_DATA_DIR: dataDir, ...env },
          timeout: 90_000,
          maxBuffer: 64 * 1024 * 1024,
        });
        return stdout;
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    };
    const paths = (doc: { paths: Record<string, unknown> }) => Object.keys(doc.paths);

    it('prints the OpenAPI document of each edition, each a superset of the one before', async () => {
      const docs = [];
      for (const edition of ['community', 'enterprise', 'cloud']) {
        const doc = JSON.parse(await gatehouse({}, 'openapi', edition));
        expect(doc.openapi, edition).to.equal('3.1.0');
        expect(doc.info.title).to.equal(`Gatehouse API (${edition} edition)`);
        expect(paths(doc), edition).to.include('/api/login');
        docs.push(doc);
      }
      const [community, enterprise, cloud] = docs;
      expect(paths(enterprise)).to.include.members(paths(community));
      expect(paths(cloud)).to.include.members(paths(enterprise));
      expect(paths(cloud).length, 'cloud adds its calls').to.be.greaterThan(paths(community).length);
    });

    it("prints a custom list's document and runs its plugin's command", async () => {
      const doc = JSON.parse(await gatehouse({ GATEHOUSE_CONFIG: customConfig }, 'openapi'));
      expect(paths(doc)).to.include.members(['/api/login', '/api/greeting']);
      // Not mistaken for the edition's own document: the title names what the operator added.
      expect(doc.info.title).to.equal('Gatehouse API (community edition with greeting)');
      const out = await gatehouse({ GATEHOUSE_CONFIG: customConfig }, 'greet', 'Grace', '--loud');
      // A first command on a fresh data directory also logs the secret key it generated; the answer is the last line.
      expect(out.trimEnd().split('\n').at(-1)).to.equal('HELLO GRACE');
    });
  });

  describe('what the host refuses, naming the entry', () => {
    const resolve = pluginResolver({});

    it('an entry that is no bundled plugin and no installed package', async () => {
      const err = await resolve('gatehouse-plugin-nobody-wrote').catch((e: Error) => e);
      expect(err).to.be.instanceOf(ConfigError);
      expect((err as Error).message).to.match(/"gatehouse-plugin-nobody-wrote" is not a bundled plugin/);
      const odd = await resolve('Not A Name!').catch((e: Error) => e);
      expect((odd as Error).message).to.match(/neither a bundled plugin/);
    });

    it('a path that does not exist, or that exports no manifest', async () => {
      const missing = await resolve(path.join(fixtures, 'nowhere')).catch((e: Error) => e);
      expect((missing as Error).message).to.match(/does not exist/);
      const notOne = await resolve(path.join(fixtures, 'not-a-plugin')).catch((e: Error) => e);
      expect((notOne as Error).message).to.match(/does not export a plugin manifest/);
    });

    it('a plugin listed before what it depends on, or twice', async () => {
      const needsCloud = definePlugin({ name: 'needs-cloud', dependsOn: ['cloud'], register() {} });
      const early = await createKernel({ env: {}, overrides: quiet, extraPlugins: [needsCloud] }).catch(
        (e: Error) => e,
      );
      expect((early as Error).message).to.match(/plugin "needs-cloud" needs "cloud" listed before it/);
      const twice = await createKernel({
        env: {},
        overrides: { ...quiet, plugins: ['community', 'community'] },
      }).catch((e: Error) => e);
      expect((twice as Error).message).to.match(/lists "community" twice/);
    });
  });
});
