// The version of the docs at the site root is the product a release ships: labelled with the root package.json's
// version, with the plugin-author pages in its sidebar and search index, and calling nothing planned that the
// server serves. Older releases' snapshots are served under /<version> and labelled as older.
// docs/content/developers/development.md ("Docs versions") says how a release freezes its docs.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startServer } from '../../support/server';
import {
  buildDir,
  type DocsServer,
  docsDir,
  ensureDocsBuild,
  guardedContext,
  launchChromium,
  startDocsServer,
  visibleText,
} from './docs-site';

const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, 'utf8')) as T;
const productVersion = readJson<{ version: string }>(join(docsDir, '..', 'package.json')).version;
const olderReleases = readJson<string[]>(join(docsDir, 'versions.json')).filter((v) => v !== productVersion);

function files(dir: string, suffix: RegExp): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? files(path, suffix) : suffix.test(entry.name) ? [path] : [];
  });
}

/** The site path of a page of docs/content (no slug overrides are used there). */
const routeOf = (file: string) =>
  `/${relative(join(docsDir, 'content'), file)
    .replace(/\.mdx?$/, '')
    .replace(/(^|\/)index$/, '$1')}`;

/** The built pages of the root version: everything but the older releases' folders, the 404 page and search. */
function rootPages(): { name: string; text: string }[] {
  return files(buildDir, /\.html$/)
    .map((path) => relative(buildDir, path))
    .filter(
      (name) =>
        name !== '404.html' &&
        !name.startsWith('search/') &&
        !olderReleases.some((version) => name.startsWith(`${version}/`)),
    )
    .map((name) => ({ name, text: visibleText(readFileSync(join(buildDir, name), 'utf8')) }));
}

const plannedWords = /\bplanned\b|\bnot (?:yet )?built\b|\bnot yet\b/i;

/** Each sentence, table cell or block of a page's text. */
const sentences = (text: string) =>
  text
    .split(/[.!?;:](?:\s|$)|\n|\|/)
    .map((s) => s.replace(/\s+/g, ' ').trim())
    .filter(Boolean);

/** A matcher for a feature's name as prose writes it: `api-keys` is also "API keys". */
const mention = (feature: string) =>
  new RegExp(`(?<![\\w-])${feature.replace(/[-\s]/g, '[- ]')}(?![\\w-])`, 'i');

/** The sentences of `pages` that call one of `features` planned. */
function plannedClaims(pages: { name: string; text: string }[], features: string[]): string[] {
  return pages.flatMap(({ name, text }) =>
    sentences(text)
      .filter((sentence) => plannedWords.test(sentence))
      .flatMap((sentence) =>
        features.filter((f) => mention(f).test(sentence)).map((f) => `${name} (${f}): "${sentence}"`),
      ),
  );
}

describe('docs: the version at the site root is the product a release ships', function () {
  this.timeout(60_000);
  let docs: DocsServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const outside: string[] = [];

  before(async function () {
    this.timeout(360_000);
    ensureDocsBuild();
    docs = await startDocsServer();
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await docs?.stop();
  });
  beforeEach(async () => {
    context = await guardedContext(browser, outside, { viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
  });
  afterEach(async () => {
    await context.close();
    expect(outside).to.deep.equal([]);
  });

  it('labels the root with the package version and every other version as an older release', async () => {
    await page.goto(`${docs.url}/overview/concepts`);
    const menu = page.locator('nav.navbar .dropdown').filter({ has: page.locator('.dropdown__menu') });
    expect((await menu.locator('a.navbar__link').textContent())?.trim()).to.equal(productVersion);
    const labels = (await menu.locator('.dropdown__menu a').allTextContents()).map((l) => l.trim());
    expect(labels).to.deep.equal([productVersion, ...olderReleases.map((v) => `${v} (older release)`)]);
    // The root page has no version banner; an older release's page says it is one and links to the root.
    expect(await page.locator('.theme-doc-version-banner').count()).to.equal(0);
    for (const version of olderReleases) {
      await page.goto(`${docs.url}/${version}/overview/concepts`);
      const banner = page.locator('.theme-doc-version-banner');
      expect(await banner.textContent()).to.contain('no longer actively maintained');
      expect(await banner.getByRole('link').getAttribute('href')).to.equal('/overview/concepts');
    }
  });

  it('lists every developers page in the root sidebar and its search index', async () => {
    const expected = files(join(docsDir, 'content', 'developers'), /\.mdx?$/).map(routeOf);
    expect(expected).to.include.members(['/developers/writing-a-plugin', '/developers/architecture']);
    await page.goto(`${docs.url}/developers/architecture`);
    const links = page.locator('.theme-doc-sidebar-menu a.menu__link');
    await links.first().waitFor();
    const sidebar = (await links.evaluateAll((as) => as.map((a) => (a as HTMLAnchorElement).pathname))).map(
      (path) => path.replace(/\/$/, '') || '/',
    );
    expect(sidebar).to.include.members(expected);

    const index = readJson<{ documentIds: Record<string, string> }>(join(buildDir, 'search-index.json'));
    const indexed = Object.values(index.documentIds);
    expect(indexed).to.include.members(expected);
    expect(indexed.filter((id) => olderReleases.some((v) => id.startsWith(`/${v}/`)))).to.deep.equal([]);
  });

  it('calls nothing planned that the server serves (its OpenAPI tags, the sign-in methods of GET /info)', async function () {
    this.timeout(120_000);
    // The check itself: the 0.1 snapshot, written before SAML and connectors were built, is caught.
    expect(plannedClaims([{ name: 'sample', text: 'SAML single sign-on (enterprise, planned).' }], ['saml']))
      .to.not.be.empty;
    expect(plannedClaims([{ name: 'sample', text: 'The hosted service is planned.' }], ['saml'])).to.be.empty;

    const features = new Set<string>();
    // An enterprise server: its GET /info names every sign-in method, and it publishes the OpenAPI documents
    // of the community and cloud editions (the API reference's pages), which hold every edition's calls.
    const server = await startServer({ edition: 'enterprise', ssh: false });
    try {
      const info = await server.api('GET', '/info');
      expect(info.status).to.equal(200);
      for (const method of Object.keys(info.body.authentication)) features.add(method);
      for (const edition of ['community', 'cloud']) {
        const openapi = await server.api('GET', `/openapi/${edition}.json`);
        expect(openapi.status, edition).to.equal(200);
        for (const item of Object.values(openapi.body.paths as Record<string, Record<string, unknown>>)) {
          for (const operation of Object.values(item)) {
            for (const tag of (operation as { tags?: string[] }).tags ?? []) features.add(tag);
          }
        }
      }
    } finally {
      await server.stop();
    }
    // The plugins GET /info lists are the editions; the hosted service that would run the cloud one is planned.
    expect([...features]).to.include.members(['saml', 'connectors', 'billing']);
    const pages = rootPages();
    expect(pages.map((p) => p.name)).to.include('admin-guides/authentication/saml/authentication/index.html');
    expect(plannedClaims(pages, [...features])).to.deep.equal([]);
  });
});
