import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { consoleModule } from '@gatehouse/console/vite';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { build } from 'vite';
import { setupUrl } from '../../../plugins/community/setup/signature';
import { consolePluginFixture } from '../../fixtures/console-plugin/index';
import { startServer, type TestServer } from '../../support/server';
import { completeSetup, expectAccessible, launchBrowser, owner, signIn } from './support/browser';
import { ensureConsoleBuilt } from './support/console-server';

/**
 * The console learns the running plugins from the server and loads their modules, an outside plugin's
 * prebuilt ES module included, with React and the kit shared through the page's import map. The fixture plugin is
 * built here the way its author would build it (@gatehouse/console/vite), into a folder outside the repository's
 * plugins, and its manifest's `console` field points the server at it.
 */
/** A GET whose path reaches the server byte for byte. */
function rawGet(base: string, target: string): Promise<{ status: number; type: string }> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(base);
    const req = request({ hostname, port, path: target, headers: { accept: 'text/html,*/*' } }, (res) => {
      res.resume();
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']) }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

describe('web console: an outside plugin console module served by the server', function () {
  this.timeout(180_000);
  const fixtureSource = fileURLToPath(
    new URL('../../fixtures/console-plugin/web/index.tsx', import.meta.url),
  );
  let outDir: string;
  let server: TestServer;
  let browser: Browser;

  before(async () => {
    ensureConsoleBuilt();
    outDir = mkdtempSync(path.join(tmpdir(), 'gatehouse-console-module-'));
    await build({
      ...consoleModule({ entry: fixtureSource, outDir }),
      configFile: false,
      logLevel: 'silent',
    });
    [server, browser] = await Promise.all([
      startServer({ ssh: false, extraPlugins: [consolePluginFixture(outDir)] }),
      launchBrowser(),
    ]);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  it('builds a module that leaves React and the kit to the import map', () => {
    const code = readFileSync(path.join(outDir, 'index.js'), 'utf8');
    expect(code).to.match(/from\s*"react"/);
    expect(code).to.match(/from\s*"react\/jsx-runtime"/);
    expect(code).to.match(/from\s*"@gatehouse\/console"/);
    // React's own code is not in it (its internals object would be).
    expect(code).to.not.include('__CLIENT_INTERNALS');
    expect(code.length).to.be.below(8000);
  });

  it('lists the module in /info and serves its folder, and nothing outside it', async () => {
    const info = (await (await fetch(`${server.url}/info`)).json()) as {
      console_modules: { plugin: string; url: string }[];
    };
    expect(info.console_modules.map((m) => m.plugin)).to.deep.equal(['community', 'hello-console']);
    const entry = info.console_modules[1]?.url as string;
    expect(entry).to.equal('/console/plugins/hello-console/index.js');
    const served = await fetch(server.url + entry);
    expect(served.status).to.equal(200);
    expect(served.headers.get('content-type')).to.match(/^(application|text)\/javascript/);
    expect(served.headers.get('x-content-type-options')).to.equal('nosniff');
    for (const p of [
      '/console/plugins/hello-console/missing.js',
      '/console/plugins/hello-console/..%2f..%2fpackage.json',
      '/console/plugins/hello-console/../../../package.json',
      '/console/plugins/hello-console/%2e%2e/%2e%2e/%2e%2e/package.json',
      '/console/plugins/nobody/index.js',
    ]) {
      // Sent as written: fetch would fold the dots away before the server saw them.
      const res = await rawGet(server.url, p);
      expect(res.status, p).to.equal(404);
      expect(res.type, p).to.match(/json/);
    }
  });

  async function helloPage(width: number): Promise<{ page: Page; problems: string[] }> {
    const page = await (await browser.newContext({ viewport: { width, height: 900 } })).newPage();
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    await page.addInitScript(
      "document.addEventListener('securitypolicyviolation', (e) => console.error('Content Security Policy violation: ' + e.violatedDirective + ' ' + e.blockedURI))",
    );
    return { page, problems };
  }

  it('loads the module in Chromium: its page renders with the console React and kit, hooks work', async () => {
    const { page, problems } = await helloPage(1280);
    const scripts: string[] = [];
    page.on('request', (r) => {
      if (r.resourceType() === 'script') scripts.push(new URL(r.url()).pathname);
    });
    await completeSetup(page, setupUrl(server.url, server.kernel.container.cradle.keys));
    await page.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
    await page.getByRole('link', { name: 'Hello plugin' }).click();
    await page.getByRole('heading', { name: 'Hello plugin' }).waitFor();
    // The session context of the console reached the module: one kit.
    await page.getByText('Signed in as Ada Lovelace').waitFor();
    // The module called its own plugin's route through the console's client (with the session's token).
    await page.getByText('Hello from a plugin route').waitFor();
    // State hooks work: one React.
    await page.getByRole('button', { name: 'Clicked 0 times' }).click();
    await page.getByRole('button', { name: 'Clicked 1 times' }).click();
    await page.getByRole('button', { name: 'Clicked 2 times' }).waitFor();
    expect(scripts).to.include('/console/plugins/hello-console/index.js');
    expect(scripts.filter((s) => s.startsWith('/console/plugins/hello-console/'))).to.have.length(1);
    expect(problems).to.deep.equal([]);
    await expectAccessible(page, 'hello plugin page');
    // A reload lands on the plugin's page directly (the module loads before the route is matched).
    await page.reload();
    await page.getByRole('button', { name: 'Clicked 0 times' }).waitFor();
    expect(problems).to.deep.equal([]);
  });

  it('fits the plugin page at 390 px', async () => {
    const { page, problems } = await helloPage(390);
    await signIn(page, server.url, owner.username, owner.password);
    await page.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
    await page.goto(`${server.url}/hello`);
    await page.getByRole('button', { name: 'Clicked 0 times' }).waitFor();
    const widths = (await page.evaluate(
      '[document.documentElement.scrollWidth, document.documentElement.clientWidth]',
    )) as [number, number];
    expect(widths[0], 'page width').to.be.at.most(widths[1]);
    expect(problems).to.deep.equal([]);
  });
});
