// Every built page is read as a person sees it (code blocks aside): an admonition or a
// directive the Markdown pipeline did not render (`:::tip ...`, a lone `:::`, `::name`)
// would be printed as raw text, as the getting-started page once did.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect } from 'chai';
import { buildDir, ensureDocsBuild, placeholderHost, unrendered, visibleText } from './docs-site';

function htmlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'assets' ? [] : htmlFiles(path);
    return entry.name.endsWith('.html') ? [path] : [];
  });
}

/** The http(s) addresses of a page's links. */
function externalLinks(html: string): string[] {
  return [...html.matchAll(/<a\b[^>]*?\bhref=(?:"([^"]*)"|'([^']*)'|([^\s>]+))/g)]
    .map((m) => (m[1] ?? m[2] ?? m[3] ?? '').replaceAll('&amp;', '&'))
    .filter((href) => /^https?:\/\//.test(href));
}

describe('every built docs page is rendered: no raw admonition or directive', function () {
  this.timeout(600_000);
  let pages: { name: string; text: string }[];

  before(() => {
    ensureDocsBuild();
    pages = htmlFiles(buildDir).map((path) => ({
      name: relative(buildDir, path),
      text: visibleText(readFileSync(path, 'utf8')),
    }));
  });

  it('recognises the raw forms it looks for, and leaves code and ordinary colons alone', () => {
    const page = (body: string) => unrendered(visibleText(`<article>${body}</article>`));
    expect(page('<p>:::tip Prefer not to run a server?</p><p>Cloud runs it.</p><p>:::</p>')).to.deep.equal([
      ':::tip Prefer not to run a server?',
      ':::',
    ]);
    expect(page('<p>:::caution[Not built yet]</p>')).to.deep.equal([':::caution[Not built yet]']);
    expect(page('<p>::note</p><p>::youtube[intro]{#x}</p>')).to.deep.equal([
      '::note',
      '::youtube[intro]{#x}',
    ]);
    expect(page('<p>Listen on [::1]:8080 or ::ffff:127.0.0.1, time 10:30:00.</p>')).to.deep.equal([]);
    expect(page('<pre><code>:::tip\nstd::string\n:::</code></pre><p>a <code>:::</code> b</p>')).to.deep.equal(
      [],
    );
  });

  it('builds the pages it checks, the getting-started tip among them as an admonition', () => {
    expect(pages.length).to.be.greaterThan(100);
    for (const name of ['overview/getting-started/index.html', '0.1/overview/getting-started/index.html']) {
      const html = readFileSync(join(buildDir, name), 'utf8');
      const tip = /<div class="[^"]*theme-admonition-tip[^"]*"[\s\S]*?<\/div><\/div>/.exec(html)?.[0] ?? '';
      expect(visibleText(tip), name).to.contain('Trying it on one machine?');
    }
  });

  it('links nowhere a placeholder host: no "Get Started" or "Source" to an address that does not exist', () => {
    // Minified pages leave attribute values unquoted, so all three forms count.
    expect(
      externalLinks('<a href=https://git.gatehouse.example/x class=a><a href="https://a.org/?b&amp;c">'),
    ).to.deep.equal(['https://git.gatehouse.example/x', 'https://a.org/?b&c']);
    const wrong: string[] = [];
    for (const path of htmlFiles(buildDir)) {
      for (const href of externalLinks(readFileSync(path, 'utf8'))) {
        if (placeholderHost(new URL(href).hostname)) wrong.push(`${relative(buildDir, path)}: ${href}`);
      }
    }
    expect(wrong).to.deep.equal([]);
  });

  it("gives every search hit a snippet that starts with its page's own text", () => {
    const index = JSON.parse(readFileSync(join(buildDir, 'search-index.json'), 'utf8')) as {
      storedFields: Record<string, { url: string; excerpt: string }>;
    };
    const hits = Object.values(index.storedFields);
    expect(hits.length).to.be.greaterThan(50);
    const wrong: string[] = [];
    for (const { url, excerpt } of hits) {
      if (/Version: |On this page|^\s*$/.test(excerpt)) wrong.push(`${url}: "${excerpt.slice(0, 60)}"`);
      const file = join(buildDir, url.replace(/^\//, ''), 'index.html');
      const html = readFileSync(
        existsSync(file) ? file : join(buildDir, `${url.replace(/^\//, '') || 'index'}.html`),
        'utf8',
      );
      // Compared without spaces: the index joins inline code and links to their words, the page's markup does not.
      const opening = excerpt.replace(/…$/, '').split(' ').slice(0, 6).join(' ');
      const squeeze = (t: string) => t.replace(/[\s\u200b]+/g, '');
      const text = html
        .replace(/<(script|style|svg)\b[\s\S]*?<\/\1>/gi, '')
        .replace(/<[^>]+>/g, '')
        .replace(/&amp;/g, '&')
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&quot;/g, '"')
        .replace(/&#39;|&#x27;/g, "'");
      if (!squeeze(text).includes(squeeze(opening)))
        wrong.push(`${url}: "${opening}" is not the page's text`);
    }
    expect(wrong).to.deep.equal([]);
  });

  it('finds no unrendered admonition or directive on any page, current or older release', () => {
    const raw = pages.flatMap(({ name, text }) => unrendered(text).map((line) => `${name}: ${line}`));
    expect(raw).to.deep.equal([]);
  });
});
