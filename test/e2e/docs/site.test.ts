/// <reference lib="dom" />
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import sirv from 'sirv';
import { startServer } from '../../support/server';
import {
  buildDir,
  type DocsServer,
  docsDir,
  ensureDocsBuild,
  guardedContext,
  launchChromium,
  specRoutes,
  startDocsServer,
} from './docs-site';

const axePath = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const { version: productVersion } = JSON.parse(readFileSync(join(docsDir, '..', 'package.json'), 'utf8')) as {
  version: string;
};

interface OpenApi {
  paths: Record<string, Record<string, unknown>>;
}
const methods = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'];

/** Scrolls an API reference to its end, as a reader would, until every operation has its details. */
async function scrollThroughOperations(page: Page): Promise<void> {
  await page.locator('[data-api-reference]').waitFor();
  for (let step = 0; step < 1000; step++) {
    const done = await page.evaluate(async () => {
      const waiting = document.querySelector('[data-operation][aria-busy]');
      const atEnd = window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 2;
      if (atEnd && !waiting) return true;
      // Two screens a step: an operation counts as near from a screen above the viewport to a screen below it. One
      // that a busy machine's slow frames let a step pass is brought into view at the end, as a reader would.
      if (atEnd && waiting) waiting.scrollIntoView();
      else window.scrollBy(0, 2 * window.innerHeight);
      // Two frames, so that the visibility of what came near has been looked at before the next step.
      await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
      return false;
    });
    if (done) return;
  }
  throw new Error('some operations never showed their details');
}

/** One call of `gatehouse permissions <edition> --json`. */
interface PermissionRow {
  method: string;
  path: string;
  callers: { user: boolean; apiKey: boolean };
  roles: string[];
}

function operationsOf(edition: string): string[] {
  const document = JSON.parse(readFileSync(join(docsDir, 'generated', `${edition}.json`), 'utf8')) as OpenApi;
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((key) => methods.includes(key))
      .map((method) => `${method.toUpperCase()} ${path}`),
  );
}

/** Values of the localStorage keys equal to `prefix` or starting with `prefix-`. */
function storedValues(page: Page, prefix: string): Promise<(string | null)[]> {
  return page.evaluate(
    (p) =>
      Object.keys(localStorage)
        .filter((k) => k === p || k.startsWith(`${p}-`))
        .map((k) => localStorage.getItem(k)),
    prefix,
  );
}

describe('documentation site', function () {
  this.timeout(60_000);
  let server: DocsServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const outside: string[] = [];

  before(async function () {
    this.timeout(360_000);
    ensureDocsBuild();
    server = await startDocsServer();
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  beforeEach(async () => {
    context = await guardedContext(browser, outside, { viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
  });

  afterEach(async () => {
    await context.close();
  });

  it('answers every route of the site with its own page', async () => {
    const titles = new Map<string, string>();
    for (const route of specRoutes) {
      const answer = await fetch(server.url + route);
      expect(answer.status, route).to.equal(200);
      const html = await answer.text();
      const title = /<title[^>]*>([^<]*)<\/title>/.exec(html)?.[1] ?? '';
      expect(title, route).to.not.match(/not found/i);
      expect(titles.has(title), `${route} has the same title as ${titles.get(title)}`).to.equal(false);
      titles.set(title, route);
      if (!route.startsWith('/developers/openapi') && route !== '/search') {
        expect(html, route).to.match(/<article/);
        expect(/<h1[^>]*>/.test(html), `${route} has a heading`).to.equal(true);
      }
    }
  });

  it('shows the not-found page for unknown paths', async () => {
    const answer = await page.goto(`${server.url}/no/such/page`);
    expect(answer?.status()).to.equal(404);
    await page.getByRole('heading', { name: 'Page Not Found' }).waitFor();
  });

  it('redirects .html and /index.html paths to the clean path on the static server', async () => {
    const cases: [string, string][] = [
      ['/overview/faq.html', '/overview/faq'],
      ['/overview/faq/index.html', '/overview/faq'],
      ['/user-guides/firewall/index.html', '/user-guides/firewall'],
      ['/index.html', '/'],
      ['/overview/faq.html?x=1', '/overview/faq?x=1'],
    ];
    for (const [from, to] of cases) {
      const answer = await fetch(server.url + from, { redirect: 'manual' });
      expect(answer.status, from).to.equal(301);
      expect(answer.headers.get('location'), from).to.equal(to);
    }
    await page.goto(`${server.url}/overview/faq.html`);
    expect(new URL(page.url()).pathname).to.equal('/overview/faq');
    await page.getByRole('heading', { level: 1, name: 'Frequently asked questions' }).waitFor();
  });

  it('redirects .html paths in the browser when a plain server falls back to 404.html', async () => {
    // A server with no redirect rule of its own, as a Gatehouse server serving the build may be.
    const files = sirv(buildDir, { extensions: ['html'] });
    const notFound = readFileSync(join(buildDir, '404.html'));
    const plain: Server = createServer((req, res) =>
      files(req, res, () => {
        res.writeHead(404, { 'Content-Type': 'text/html' });
        res.end(notFound);
      }),
    );
    await new Promise<void>((done) => plain.listen(0, '127.0.0.1', done));
    try {
      const base = `http://127.0.0.1:${(plain.address() as AddressInfo).port}`;
      await page.goto(`${base}/self-hosted/deploying.html`);
      await page.waitForURL(`${base}/self-hosted/deploying`);
      await page.getByRole('heading', { level: 1, name: 'Deploying Gatehouse' }).waitFor();
    } finally {
      plain.close();
    }
  });

  it('is dark by default, switches to light and keeps the choice across reloads', async () => {
    await page.goto(`${server.url}/overview/concepts`);
    expect(await page.getAttribute('html', 'data-theme')).to.equal('dark');
    await page
      .getByRole('button', { name: /dark mode|system mode|light mode/i })
      .first()
      .click();
    await page.waitForFunction(() => document.documentElement.dataset.theme !== 'dark');
    const chosen = await page.getAttribute('html', 'data-theme');
    expect(chosen).to.equal('light');
    await page.reload();
    expect(await page.getAttribute('html', 'data-theme')).to.equal('light');
    // Docusaurus suffixes its storage keys per site (theme-<hash>), so match the prefix.
    expect(await storedValues(page, 'theme')).to.deep.equal(['light']);
  });

  it('renders light when light is forced, on a system that prefers dark, and the diagram follows', async () => {
    /** What a person sees: the text and bar colours, and which diagram is shown. */
    /** Which drawing an image shows: small SVGs are inlined as data URIs, so their title says. */
    const drawing = (src: string) => {
      const [body = '', fragment = ''] = src.split('#');
      const svg = body.startsWith('data:image/svg+xml;base64,')
        ? Buffer.from(body.slice(body.indexOf(',') + 1), 'base64').toString('utf8')
        : decodeURIComponent(body);
      const mode = /architecture \((light|dark) colours\)|architecture-(light|dark)/.exec(svg);
      return `${mode?.[1] ?? mode?.[2] ?? 'unknown'} drawing #${fragment}`;
    };
    const luminance = (colour: string) => {
      const [r = 0, g = 0, b = 0] = (colour.match(/[\d.]+/g) ?? []).map(Number);
      return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
    };
    const looks = async (p: Page) => {
      // Plain values only cross into the page: the browser returns colours, luminance is computed here.
      const seen = await p.evaluate(() => ({
        theme: document.documentElement.dataset.theme,
        text: getComputedStyle(document.querySelector('.markdown p') as Element).color,
        bar: getComputedStyle(document.querySelector('.navbar') as Element).backgroundColor,
        diagrams: [...document.querySelectorAll<HTMLImageElement>('.markdown img')]
          .filter((img) => img.offsetParent !== null)
          .map((img) => img.getAttribute('src') ?? ''),
      }));
      return {
        ...seen,
        text: luminance(seen.text),
        bar: luminance(seen.bar),
        diagrams: seen.diagrams.map(drawing),
      };
    };
    const dark = await guardedContext(browser, outside, {
      viewport: { width: 1280, height: 900 },
      colorScheme: 'dark',
    });
    try {
      const p = await dark.newPage();
      await p.goto(`${server.url}/overview/concepts`);
      const before = await looks(p);
      expect(before).to.include({ theme: 'dark' });
      expect(before.text).to.be.above(0.7);
      expect(before.bar).to.be.below(0.3);
      expect(before.diagrams).to.have.length(1);
      expect(before.diagrams).to.deep.equal(['dark drawing #dark-only']);

      // Forced light by the switch: light bars, dark text, the light diagram only.
      await p
        .getByRole('button', { name: /dark mode|system mode|light mode/i })
        .first()
        .click();
      await p.waitForFunction(() => document.documentElement.dataset.theme === 'light');
      const light = await looks(p);
      expect(light.text).to.be.below(0.3);
      expect(light.bar).to.be.above(0.9);
      expect(light.diagrams).to.have.length(1);
      expect(light.diagrams).to.deep.equal(['light drawing #light-only']);
      await p.reload();
      expect(await looks(p)).to.deep.equal(light);

      // Forced light by the address, the way a link can ask for it.
      await p.evaluate(() => localStorage.clear());
      await p.goto(`${server.url}/overview/concepts?docusaurus-theme=light`);
      const asked = await looks(p);
      expect(asked).to.include({ theme: 'light' });
      expect(asked.text).to.be.below(0.3);
      expect(asked.diagrams).to.deep.equal(['light drawing #light-only']);
    } finally {
      await dark.close();
    }
  });

  it('draws the architecture for each colour mode and says the embedded store is the default', () => {
    for (const [mode, background] of [
      ['light', 'light'],
      ['dark', 'dark'],
    ] as const) {
      const svg = readFileSync(join(docsDir, 'static', 'img', `architecture-${mode}.svg`), 'utf8');
      expect(svg, mode).to.contain('embedded store (default)');
      expect(svg, mode).to.contain('or PostgreSQL + Redis');
      // No full-size opaque background: the page's own colour shows through.
      expect(svg, mode).to.not.match(/<rect width="760"/);
      const text = /<g fill="(#[0-9a-f]{6})">\s*<text/.exec(svg)?.[1] ?? '';
      const lum = Number.parseInt(text.slice(1, 3), 16) / 255;
      expect(lum, `${mode} text colour`).to.be[background === 'light' ? 'below' : 'above'](0.5);
    }
  });

  it('keeps the announcement bar dismissed across reloads', async () => {
    await page.goto(`${server.url}/`);
    const bar = page.locator('.theme-announcement-bar');
    await bar.waitFor();
    expect(await bar.textContent()).to.contain(`Gatehouse ${productVersion} is out`);
    await bar.getByRole('button', { name: 'Close' }).click();
    await bar.waitFor({ state: 'detached' });
    await page.reload();
    await page.locator('h1').first().waitFor();
    // The server-rendered page still holds the bar until the app starts; an inline script hides it before the
    // first paint, and the started app removes it.
    expect(await page.locator('html').getAttribute('data-announcement-bar-initially-dismissed')).to.equal(
      'true',
    );
    expect(await page.locator('.theme-announcement-bar').isVisible()).to.equal(false);
    await page.locator('.theme-announcement-bar').waitFor({ state: 'detached' });
    expect(await storedValues(page, 'docusaurus.announcement.dismiss')).to.deep.equal(['true']);
  });

  it('offers a docs version choice and keeps it in local storage across reloads', async () => {
    await page.goto(`${server.url}/overview/concepts`);
    const versionMenu = page.locator('nav.navbar .dropdown').filter({ has: page.locator('.dropdown__menu') });
    const shownVersion = async () => (await versionMenu.locator('a.navbar__link').textContent())?.trim();
    expect(await shownVersion()).to.equal(productVersion);
    await versionMenu.hover();
    await versionMenu.getByRole('link', { name: '0.1 (older release)' }).click();
    await page.waitForURL(`${server.url}/0.1/overview/concepts`);
    await page.getByText('which is no longer actively maintained').waitFor();
    expect(await storedValues(page, 'docs-preferred-version-default')).to.deep.equal(['0.1']);

    // Off the docs pages the menu shows the stored choice, also after a reload, and leads back to it.
    await page.goto(`${server.url}/developers/openapi/community`);
    await page.reload();
    await page.locator('[data-api-reference="community"]').waitFor();
    await page.waitForFunction(() =>
      document.querySelector('nav.navbar .dropdown > a.navbar__link')?.textContent?.includes('older release'),
    );
    expect(await shownVersion()).to.equal('0.1 (older release)');
    await versionMenu.locator('a.navbar__link').click();
    await page.waitForURL(`${server.url}/0.1/`);

    // Choosing the current version again is remembered the same way.
    await page.goto(`${server.url}/0.1/overview/faq`);
    await versionMenu.hover();
    await versionMenu.getByRole('link', { name: productVersion, exact: true }).click();
    await page.waitForURL(`${server.url}/overview/faq`);
    await page.goto(`${server.url}/search`);
    await page.reload();
    await page.locator('main').first().waitFor();
    expect(await storedValues(page, 'docs-preferred-version-default')).to.deep.equal(['current']);
    expect(await shownVersion()).to.equal(productVersion);
  });

  it('shows the permission matrix generated from the route tables on the roles page', async () => {
    // The page lists every call of the three editions once (enterprise and cloud add their own calls).
    const generated = (edition: string) =>
      JSON.parse(
        readFileSync(join(docsDir, 'generated', `permissions-${edition}.json`), 'utf8'),
      ) as PermissionRow[];
    const calls = generated('community');
    const everyCall = new Set(
      ['community', 'enterprise', 'cloud'].flatMap((edition) =>
        generated(edition).map((call) => `${call.method} ${call.path}`),
      ),
    );
    expect(calls.length).to.be.greaterThan(0);
    expect(everyCall.size, 'the enterprise and cloud editions add calls').to.be.greaterThan(calls.length);
    await page.goto(`${server.url}/user-guides/settings/namespace/members/roles`);
    const matrix = page.locator('[data-permission-matrix]');
    await matrix.waitFor();
    const rendered = await matrix
      .locator('tr[data-call]')
      .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-call')));
    expect(rendered).to.have.members([...everyCall]);
    // Each role column says what the route table says, for a call where the roles differ.
    const sample = calls.find(
      (call) => (call.callers.user || call.callers.apiKey) && call.roles.length === 2,
    );
    expect(sample, 'a call only owners and administrators may make').to.not.equal(undefined);
    const cells = await matrix
      .locator(`tr[data-call="${sample?.method} ${sample?.path}"] td[data-allowed]`)
      .evaluateAll((tds) => tds.map((td) => td.getAttribute('data-allowed')));
    expect(cells).to.deep.equal(
      ['owner', 'administrator', 'operator', 'observer'].map((role) =>
        sample?.roles.includes(role) ? 'yes' : 'no',
      ),
    );
    // ...and each cell sits under its own heading.
    const columns = await matrix
      .locator(`tr[data-call="${sample?.method} ${sample?.path}"]`)
      .evaluate((row) => {
        const headings = [...(row.closest('table')?.querySelectorAll('thead th') ?? [])].map(
          (th) => th.textContent,
        );
        return {
          headings: headings.length,
          cells: row.querySelectorAll('td').length,
          roleHeadings: [...row.querySelectorAll('td')].flatMap((td, i) =>
            td.hasAttribute('data-allowed') ? [headings[i]] : [],
          ),
        };
      });
    expect(columns.cells).to.equal(columns.headings);
    expect(columns.roleHeadings).to.deep.equal(['Owner', 'Administrator', 'Operator', 'Observer']);
  });

  it('finds a known page from the search modal and on the /search page', async () => {
    await page.goto(`${server.url}/`);
    await page.getByRole('button', { name: 'Search' }).click();
    const dialog = page.getByRole('dialog', { name: 'Search the documentation' });
    await dialog.getByRole('searchbox').fill('tenant id');
    const hit = dialog.getByRole('link', { name: /Retrieving your tenant ID/ });
    await hit.waitFor();
    // The snippet is the page's own opening text, not the version badge and "On this page".
    const snippet = ((await hit.textContent()) ?? '').replace(/^Retrieving your tenant ID/, '').trim();
    expect(snippet).to.match(/^Agents register into a namespace by its tenant ID/);
    expect(snippet).to.not.match(/Version: |On this page/);
    await hit.click();
    await page.waitForURL(/\/user-guides\/namespaces\/retrieving-your-tenant-id$/);
    await page.getByRole('heading', { level: 1, name: 'Retrieving your tenant ID' }).waitFor();

    await page.goto(`${server.url}/search?q=firewall%20priority`);
    await page.getByRole('link', { name: 'Firewall rules' }).first().waitFor();
  });

  it('says it cannot fetch results when the search index is blocked', async () => {
    await page.route('**/search-index.json', (route) => route.abort('failed'));
    await page.goto(`${server.url}/overview/faq`);
    await page.getByRole('button', { name: 'Search' }).click();
    const dialog = page.getByRole('dialog', { name: 'Search the documentation' });
    await dialog.getByRole('searchbox').fill('tunnel');
    await dialog.getByText('Unable to fetch results').waitFor();
    await dialog.getByText('You might want to check your network connection.').waitFor();
    await page.keyboard.press('Escape');
    await page.goto(`${server.url}/search?q=tunnel`);
    await page.getByText('Unable to fetch results').waitFor();
  });

  it('zooms an image and closes the zoom on click and after scrolling 40 px', async () => {
    await page.goto(`${server.url}/overview/concepts`);
    // The zoom plugin attaches itself a moment after each route renders.
    // The diagram of the other colour mode is hidden; the visible one is zoomed.
    const image = page.locator('.markdown img.medium-zoom-image:visible').first();
    await image.waitFor();
    const overlay = page.locator('.medium-zoom-overlay');
    // The image moves while the opening animation runs (a click then misses it, and scrolls are ignored), so each
    // opening waits for the plugin to say it is done.
    const open = async () => {
      const opened = page.evaluate(
        () =>
          new Promise<void>((done) =>
            [...document.querySelectorAll<HTMLElement>('.markdown img.medium-zoom-image')]
              .find((img) => img.offsetParent !== null)
              ?.addEventListener('medium-zoom:opened', () => done(), { once: true }),
          ),
      );
      await image.click();
      await opened;
      await overlay.waitFor({ state: 'visible' });
    };
    await open();
    // A click where the zoomed image is, the middle of the viewport: a locator click first scrolls the element
    // into view, and a scroll past 40 px is itself what closes the zoom (seen in CI as a click on a detached image).
    const viewport = page.viewportSize() ?? { width: 1280, height: 720 };
    await page.mouse.click(viewport.width / 2, viewport.height / 2);
    await overlay.waitFor({ state: 'detached' });

    await open();
    // The overlay stays within the 40 px scroll offset and closes beyond it.
    await page.evaluate(() => window.scrollBy(0, 30));
    await page.waitForTimeout(100);
    expect(await overlay.isVisible()).to.equal(true);
    await page.evaluate(() => window.scrollBy(0, 30));
    await overlay.waitFor({ state: 'detached' });
  });

  it('highlights code blocks, and hydrating them changes nothing', async () => {
    const errors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${server.url}/self-hosted/configuring`);
    // The first YAML block of the page (the current configuring page has more than one).
    const yaml = page.locator('pre.language-yaml').first();
    await yaml.waitFor();
    // Wait for hydration: the copy button only works once React owns the block.
    await page.waitForFunction(() =>
      Object.keys(document.querySelector('pre.language-yaml') ?? {}).some((key) => key.startsWith('__react')),
    );
    expect(await yaml.locator('.token.key').allTextContents()).to.include.members(['http', 'port', 'ssh']);
    expect(await yaml.locator('.token.number').allTextContents()).to.include.members(['8080', '2222']);
    await page.goto(`${server.url}/self-hosted/deploying`);
    await page.locator('pre.language-bash').first().waitFor();
    expect(await page.locator('pre.language-bash .token.function').count()).to.be.greaterThan(0);
    expect(await page.locator('pre.language-ini .token.key').count()).to.be.greaterThan(0);
    expect(errors).to.deep.equal([]);
  });

  it('lists only h2 and h3 headings in the table of contents', async () => {
    await page.goto(`${server.url}/self-hosted/reference`);
    const article = page.locator('article');
    const h4Count = await article.locator('h4').count();
    expect(h4Count, 'the reference page has h4 command headings').to.be.greaterThan(0);
    const targets = await page.$$eval('.table-of-contents a', (links) =>
      links.map((link) => {
        const id = decodeURIComponent(new URL((link as HTMLAnchorElement).href).hash.slice(1));
        return document.getElementById(id)?.tagName ?? 'missing';
      }),
    );
    expect(targets.length).to.be.greaterThan(1);
    for (const tag of targets) expect(['H2', 'H3']).to.include(tag);
  });

  it('fits every navbar item side by side from the breakpoint up', async () => {
    await page.goto(`${server.url}/overview/faq`);
    for (const width of [997, 1100, 1250, 1400]) {
      await page.setViewportSize({ width, height: 700 });
      const overlaps = await page.evaluate(() => {
        const items = [
          ...document.querySelectorAll<HTMLElement>(
            '.navbar__inner .navbar__brand, .navbar__inner .navbar__item',
          ),
        ].filter((item) => item.offsetParent !== null);
        const boxes = items.map((item) => ({
          name: item.textContent?.trim(),
          box: item.getBoundingClientRect(),
        }));
        return boxes.flatMap((a, i) =>
          boxes
            .slice(i + 1)
            .filter(
              (b) =>
                a.box.left < b.box.right - 1 &&
                b.box.left < a.box.right - 1 &&
                a.box.top < b.box.bottom &&
                b.box.top < a.box.bottom,
            )
            .map((b) => `${a.name} / ${b.name}`),
        );
      });
      expect(overlaps, `at ${width} px`).to.deep.equal([]);
    }
  });

  it('shows the hamburger menu below 996 px only', async () => {
    await page.goto(`${server.url}/overview/features`);
    const toggle = page.locator('.navbar__toggle');
    expect(await toggle.isVisible()).to.equal(false);
    await page.setViewportSize({ width: 995, height: 800 });
    await toggle.waitFor({ state: 'visible' });
    await toggle.click();
    await page.locator('.navbar-sidebar').getByRole('link', { name: 'Self-hosted' }).first().waitFor();
    await page.setViewportSize({ width: 997, height: 800 });
    await toggle.waitFor({ state: 'hidden' });
  });

  for (const edition of ['community', 'cloud']) {
    it(`renders every operation of the ${edition} API document`, async () => {
      const operations = operationsOf(edition);
      expect(operations.length).to.be.greaterThan(0);
      await page.goto(`${server.url}/developers/openapi/${edition}`);
      await page.locator(`[data-api-reference="${edition}"]`).waitFor();
      const rendered = await page.$$eval('[data-operation]', (nodes) =>
        nodes.map((node) => node.getAttribute('data-operation')),
      );
      expect(rendered).to.have.members(operations);
    });
  }

  it("renders an operation's details as it comes near the viewport, and every one by the end of the page", async () => {
    await page.setViewportSize({ width: 390, height: 800 });
    await page.goto(`${server.url}/developers/openapi/community`);
    await page.locator('[data-api-reference="community"]').waitFor();
    const first = page.locator('[data-operation]').first();
    await first.locator('h4', { hasText: 'Responses' }).waitFor();
    // Far below the first screen, an operation waits with its title only, and says it is not complete.
    const last = page.locator('[data-operation]').last();
    expect(await last.getAttribute('aria-busy')).to.equal('true');
    expect(await last.locator('h4').count()).to.equal(0);
    await scrollThroughOperations(page);
    await last.locator('h4', { hasText: 'Responses' }).waitFor();
    expect(await page.locator('[data-operation]').count()).to.equal(operationsOf('community').length);
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('navigates the API reference by tag from a side menu, one page per tag', async () => {
    const document = JSON.parse(readFileSync(join(docsDir, 'generated', 'community.json'), 'utf8')) as {
      paths: Record<string, Record<string, { tags?: string[] }>>;
    };
    const devices = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method, op]) => methods.includes(method) && op.tags?.[0] === 'devices')
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    await page.goto(`${server.url}/developers/openapi/community`);
    const menu = page.getByRole('navigation', { name: 'API sections' });
    await menu.waitFor();
    expect(await menu.isVisible()).to.equal(true);
    await menu.getByRole('link', { name: /^devices \d+$/ }).click();
    await page.waitForURL(/\?tag=devices$/);
    const shown = async () =>
      page.$$eval('[data-operation]', (nodes) => nodes.map((node) => node.getAttribute('data-operation')));
    expect(await shown()).to.have.members(devices);
    expect(await menu.getByRole('link', { name: /^devices \d+$/ }).getAttribute('aria-current')).to.equal(
      'page',
    );
    // The side menu stays in view while the operations scroll.
    await page.mouse.wheel(0, 3000);
    await page.waitForTimeout(200);
    expect(await menu.isVisible()).to.equal(true);
    await page.goBack();
    await page.waitForURL(/\/developers\/openapi\/community$/);
    expect((await shown()).length).to.equal(operationsOf('community').length);
  });

  it('gives parameters their real types: literal unions as values, defaults as optional', async () => {
    await page.goto(`${server.url}/developers/openapi/community?tag=devices`);
    const list = page.locator('[data-operation="GET /api/devices"]');
    await list.waitFor();
    const row = (name: string) =>
      list.locator('tbody tr').filter({ has: page.locator('td code', { hasText: new RegExp(`^${name}$`) }) });
    expect(await row('sort_by').locator('td').nth(2).textContent()).to.contain('"last_seen" | "name"');
    expect(await row('order_by').locator('td').nth(2).textContent()).to.contain('"asc" | "desc"');
    expect(await row('page').locator('td').first().textContent()).to.not.contain('required');
    const status = page.locator('[data-operation="PATCH /api/devices/{uid}/{status}"]');
    // An operation shows its details once it comes near the viewport.
    await status.scrollIntoViewIfNeeded();
    expect(await status.locator('tbody tr').nth(1).locator('td').nth(2).textContent()).to.contain(
      '"accept" | "reject" | "pending" | "unused"',
    );
    expect(await status.locator('tbody tr').first().locator('td').first().textContent()).to.contain(
      'required',
    );
  });

  it('sends Try it to the Gatehouse server the reader sets, never to the docs host', async () => {
    const gatehouse = await startServer({ ssh: false, overrides: { http: { corsOrigins: server.url } } });
    try {
      await page.goto(`${server.url}/developers/openapi/community?tag=instance`);
      const setting = page.getByLabel('Server for Try it');
      await setting.waitFor();
      // Without a build setting the first guess is a local server, not this documentation host.
      expect(await setting.inputValue()).to.equal('http://localhost:8080');
      await setting.fill(gatehouse.url);
      const info = page.locator('[data-operation="GET /info"]');
      await info.scrollIntoViewIfNeeded();
      await info.getByRole('button', { name: 'Try it' }).click();
      await info.getByText(`Sends to ${gatehouse.url}`).waitFor();
      const sent: string[] = [];
      page.on('request', (request) => sent.push(request.url()));
      await info.getByRole('button', { name: 'Send' }).click();
      const answer = info.locator('output');
      await answer.getByText('200').waitFor();
      expect(JSON.parse((await answer.locator('pre').textContent()) ?? '{}')).to.have.property('version');
      expect(sent.some((url) => url.startsWith(`${gatehouse.url}/info`))).to.equal(true);
      expect(sent.filter((url) => url.startsWith(server.url) && /\/info(\?|$)/.test(url))).to.deep.equal([]);
      // The choice is kept for the next visit.
      // The page renders the build's default first and reads the reader's choice once hydrated.
      await page.reload();
      await page
        .waitForFunction(
          (url) => (document.getElementById('api-server') as HTMLInputElement | null)?.value === url,
          gatehouse.url,
          { timeout: 10_000 },
        )
        .catch(() => undefined);
      expect(await page.getByLabel('Server for Try it').inputValue()).to.equal(gatehouse.url);
    } finally {
      await gatehouse.stop();
    }
  });

  it('says why Try it failed when the server does not allow this site', async () => {
    const gatehouse = await startServer({ ssh: false });
    try {
      await page.goto(`${server.url}/developers/openapi/community?tag=instance`);
      await page.getByLabel('Server for Try it').fill(gatehouse.url);
      const info = page.locator('[data-operation="GET /info"]');
      await info.scrollIntoViewIfNeeded();
      await info.getByRole('button', { name: 'Try it' }).click();
      await info.getByRole('button', { name: 'Send' }).click();
      await info
        .locator('output')
        .getByText(/GATEHOUSE_CORS_ORIGINS/)
        .waitFor();
    } finally {
      await gatehouse.stop();
    }
  });

  it('shows the error in a red box with Retry when the API document chunk fails, and recovers', async () => {
    await page.route('**/assets/js/openapi-community*.js', (route) => route.abort('failed'));
    await page.goto(`${server.url}/developers/openapi/community`);
    const retry = page.getByRole('button', { name: 'Retry' });
    await retry.waitFor();
    expect(await page.locator('main').textContent()).to.match(/ChunkLoadError|Loading chunk|failed/i);
    await page.unroute('**/assets/js/openapi-community*.js');
    await retry.click();
    await page.locator('[data-api-reference="community"]').waitFor();
  });

  it("shows 'This page crashed.' with Try again when a page throws while rendering", async () => {
    // Serve a copy of the API document chunk without its "paths", which the page refuses to render.
    await page.route('**/assets/js/openapi-cloud*.js', async (route) => {
      const original = await route.fetch();
      const body = (await original.text()).replace('"paths":', '"not_paths":');
      await route.fulfill({ response: original, body });
    });
    await page.goto(`${server.url}/developers/openapi/cloud`);
    await page.getByRole('heading', { name: 'This page crashed.' }).waitFor();
    await page.getByRole('button', { name: 'Try again' }).waitFor();
    expect(await page.locator('main').textContent()).to.contain(
      'The OpenAPI document has no "paths" object.',
    );
  });

  it('reloads the page when a route preload fails', async () => {
    await page.goto(`${server.url}/overview/features`);
    await page.evaluate(() => {
      (window as unknown as { loadedOnce: boolean }).loadedOnce = true;
    });
    // From now on every script fails, as after a deploy that removed the old chunks.
    await page.route('**/assets/js/*.js', (route) => route.abort('failed'));
    const reloaded = page.waitForEvent('load');
    await page.locator('.menu').getByRole('link', { name: 'Editions' }).click();
    await reloaded;
    expect(new URL(page.url()).pathname).to.equal('/overview/editions');
    expect(await page.evaluate(() => (window as unknown as { loadedOnce?: boolean }).loadedOnce)).to.equal(
      undefined,
    );
    await page.getByRole('heading', { level: 1, name: 'Editions' }).waitFor();
  });

  // The 390 px rows: there the tables scroll sideways (each must be a labelled tab stop, scrollable-region-focusable)
  // and the search button shows only its icon (its name must still hold what it shows, label-content-name-mismatch).
  for (const [route, mode, width] of [
    ['/', 'dark', 1280],
    ['/user-guides/devices/connecting', 'dark', 1280],
    ['/user-guides/devices/connecting', 'light', 1280],
    ['/developers/openapi/community', 'dark', 1280],
    ['/developers/openapi/community', 'dark', 390],
    ['/developers/openapi/community?tag=devices', 'light', 1280],
    ['/overview/concepts', 'light', 1280],
    ['/overview/getting-started/', 'dark', 390],
    ['/self-hosted/reference', 'dark', 390],
    ['/search?q=device', 'dark', 1280],
  ] as const) {
    it(`has no serious or critical accessibility violation on ${route} (${mode}, ${width} px)`, async () => {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(server.url + route);
      if (mode === 'light') {
        await page.getByRole('button', { name: /Switch between dark and light mode/ }).click();
        await page.waitForFunction(() => document.documentElement.dataset.theme === 'light');
      }
      await page.locator('main').first().waitFor();
      // Every operation's details are checked too: they render as the reader scrolls to them.
      if (route.includes('openapi')) await scrollThroughOperations(page);
      if (route.startsWith('/search')) await page.locator('main ol li').first().waitFor();
      await page.addScriptTag({ path: axePath });
      const violations = await page.evaluate(async () => {
        const axe = (window as unknown as { axe: { run: (...args: unknown[]) => Promise<AxeResults> } }).axe;
        interface AxeResults {
          violations: { id: string; impact: string | null; nodes: { target: unknown }[] }[];
        }
        const results = await axe.run(document, {
          runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'best-practice'] },
          // Experimental in axe, so off unless named: an accessible name that leaves out the visible text.
          rules: { 'label-content-name-mismatch': { enabled: true } },
        });
        return results.violations
          .filter((v) => v.impact === 'serious' || v.impact === 'critical')
          .map((v) => `${v.id} (${v.impact}): ${JSON.stringify(v.nodes.slice(0, 3).map((n) => n.target))}`);
      });
      expect(violations).to.deep.equal([]);
    });
  }

  it('never sent a request outside 127.0.0.1', () => {
    expect(outside).to.deep.equal([]);
  });
});
