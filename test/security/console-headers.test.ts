import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { setupUrl } from '../../plugins/community/setup/signature';
import { completeSetup, launchBrowser } from '../e2e/web/support/browser';
import { ensureConsoleBuilt } from '../e2e/web/support/console-server';
import { startServer, type TestServer } from '../support/server';

/**
 * A security review (lesser leaks): "the console sends no CSP, X-Frame-Options or Referrer-Policy". It now does, and the
 * console still works under them in Chromium: no Content-Security-Policy violation on the way through first-run
 * setup and the main screens.
 */
describe('security: the console sends CSP, X-Frame-Options and Referrer-Policy, and works under them', function () {
  this.timeout(120_000);
  let server: TestServer;
  let browser: Browser;

  before(async () => {
    ensureConsoleBuilt();
    [server, browser] = await Promise.all([startServer({ ssh: false }), launchBrowser()]);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('on the console page, a client-side route, a script and an API answer', async () => {
    const html = await fetch(`${server.url}/`);
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(await html.text())?.[1] as string;
    for (const p of ['/', '/devices', script, '/info', '/api/devices']) {
      const res = await fetch(server.url + p, { headers: { accept: 'text/html,*/*' } });
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp, p).to.match(/(^|; )frame-ancestors 'none'(;|$)/);
      expect(csp, p).to.match(/(^|; )script-src 'self'( 'sha256-[A-Za-z0-9+/=]+')*(;|$)/);
      expect(csp, p).to.match(/(^|; )object-src 'none'(;|$)/);
      expect(csp, p).to.not.match(/script-src[^;]*'unsafe-(inline|eval)'/);
      expect(res.headers.get('x-frame-options'), p).to.equal('DENY');
      expect(res.headers.get('referrer-policy'), p).to.equal('no-referrer');
      expect(res.headers.get('x-content-type-options'), p).to.equal('nosniff');
    }
  });

  it('runs first-run setup and the main screens in Chromium with no policy violation', async () => {
    const page: Page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    await page.addInitScript(
      "document.addEventListener('securitypolicyviolation', (e) => console.error('Content Security Policy violation: ' + e.violatedDirective + ' ' + e.blockedURI))",
    );
    await completeSetup(page, setupUrl(server.url, server.kernel.container.cradle.keys));
    await page.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
    // The inline theme script ran (its hash is allowed): switching the theme and reloading keeps it.
    await page.evaluate("localStorage.setItem('gatehouse.theme', 'light')");
    await page.reload();
    await page.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
    expect(await page.evaluate('document.documentElement.dataset.theme')).to.equal('light');
    for (const [link, text] of [
      ['Devices', 'Devices'],
      ['Sessions', 'No sessions yet'],
      ['Tags', 'No tags yet'],
    ] as const) {
      await page.getByRole('link', { name: link }).first().click();
      await page.getByText(text, { exact: true }).first().waitFor();
    }
    expect(violations).to.deep.equal([]);
  });
});
