// An offline search for the docs site: after the build, every generated page is read
// back, its title, headings and text are indexed with MiniSearch, and the serialised
// index is written next to the pages. The browser fetches that one file; no outside
// service is involved.
import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import MiniSearch from 'minisearch';
import { miniSearchOptions, searchIndexFile } from './search-options.mjs';

const entities = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", nbsp: ' ', '#x27': "'" };

function decode(text) {
  return text.replace(/&(amp|lt|gt|quot|#39|nbsp|#x27);/g, (_, name) => entities[name] ?? '');
}

function stripTags(html) {
  return decode(
    html
      .replace(/<(script|style|svg)[\s\S]*?<\/\1>/g, ' ')
      // Blocks and cells part words; inline tags (links, emphasis, code) do not.
      .replace(
        /<\/?(?:p|div|li|ul|ol|h[1-6]|td|th|tr|table|thead|tbody|br|hr|pre|blockquote|section|header|details|summary)\b[^>]*>/g,
        ' ',
      )
      .replace(/<[^>]+>/g, '')
      // The heading anchors Docusaurus adds hold a zero-width space.
      .replace(/\u200b/g, '')
      .replace(/\s+/g, ' ')
      .trim(),
  );
}

/** The attributes of an HTML tag, quoted or not (the build minifies pages and drops quotes where it can). */
function attributes(tag) {
  const found = {};
  for (const m of tag.matchAll(/([\w:-]+)(?:=(?:"([^"]*)"|'([^']*)'|([^\s"'>/]+)))?/g)) {
    found[m[1]] = m[2] ?? m[3] ?? m[4] ?? '';
  }
  return found;
}

/**
 * The page's own text: the Markdown body, without the breadcrumbs, the version badge, the "On this page" button
 * of the phone table of contents and the footer, which every page repeats.
 */
function pageBody(html) {
  const article =
    /<article[^>]*>([\s\S]*?)<\/article>/.exec(html)?.[1] ??
    /<main[^>]*>([\s\S]*?)<\/main>/.exec(html)?.[1] ??
    '';
  const markdown = /<div class=(?:"[^"]*\btheme-doc-markdown\b[^"]*"|theme-doc-markdown)[^>]*>/.exec(article);
  const body = markdown ? article.slice(markdown.index + markdown[0].length) : article;
  return body
    .replace(/<nav[\s\S]*?<\/nav>/g, ' ')
    .replace(/<footer[\s\S]*?<\/footer>/g, ' ')
    .replace(/<h1[\s\S]*?<\/h1>/, ' ');
}

/** The first words of `text`, cut at a word boundary near `length` characters. */
function opening(text, length = 160) {
  if (text.length <= length) return text;
  const cut = text.slice(0, length + 1);
  return `${cut.slice(0, Math.max(cut.lastIndexOf(' '), length / 2)).replace(/[\s,;:.]+$/, '')}…`;
}

/** Title, headings and body text of one built page, or undefined when it has nothing to index. */
export function extractPage(html) {
  const titleTag = /<title[^>]*>([\s\S]*?)<\/title>/.exec(html)?.[1] ?? '';
  const h1 = /<h1[^>]*>([\s\S]*?)<\/h1>/.exec(html)?.[1];
  const title = stripTags(h1 ?? titleTag.replace(/\s*\|\s*Gatehouse\s*$/, ''));
  const article = /<article[^>]*>([\s\S]*?)<\/article>/.exec(html)?.[1] ?? '';
  const headings = [...article.matchAll(/<h[23][^>]*>([\s\S]*?)<\/h[23]>/g)].map((m) => stripTags(m[1]));
  const body = stripTags(pageBody(html));
  const description = [...html.matchAll(/<meta\b[^>]*>/g)]
    .map((m) => attributes(m[0]))
    .find((a) => a.name === 'description')?.content;
  if (!title) return undefined;
  return {
    title,
    headings: headings.join(' '),
    text: body,
    // What a hit shows: the page's own opening words (its description when the page has no text of its own).
    excerpt: opening(body || decode(description ?? '')),
  };
}

async function readBuiltPage(outDir, routePath) {
  const relative = routePath.replace(/^\//, '');
  for (const candidate of [join(outDir, relative, 'index.html'), join(outDir, `${relative}.html`)]) {
    try {
      return await readFile(candidate, 'utf8');
    } catch {
      // try the next layout
    }
  }
  return undefined;
}

export default function localSearch(context) {
  const baseUrl = context.baseUrl;
  // Every snapshot in versions.json; the one of the shipped version has no pages, so skipping it costs nothing.
  const olderPaths = JSON.parse(readFileSync(join(context.siteDir, 'versions.json'), 'utf8')).map(
    (version) => `/${version}`,
  );
  return {
    name: 'gatehouse-local-search',
    getThemePath() {
      return new URL('./theme', import.meta.url).pathname;
    },
    async contentLoaded({ actions }) {
      actions.addRoute({ path: `${baseUrl}search`, component: '@theme/SearchPage', exact: true });
    },
    async postBuild({ outDir, routesPaths }) {
      const search = new MiniSearch(miniSearchOptions);
      const seen = new Set();
      for (const routePath of routesPaths) {
        const path = routePath.startsWith(baseUrl) ? `/${routePath.slice(baseUrl.length)}` : routePath;
        if (path === '/search' || path === '/404.html' || seen.has(path)) continue;
        // Only the docs of the version being shipped (at the root) are indexed: an older release's
        // copy under /<version> would give most hits twice, some of them out of date.
        if (olderPaths.some((older) => path === older || path.startsWith(`${older}/`))) continue;
        const html = await readBuiltPage(outDir, path);
        const page = html && extractPage(html);
        if (!page) continue;
        seen.add(path);
        search.add({ id: path, url: routePath, ...page });
      }
      await writeFile(join(outDir, searchIndexFile), JSON.stringify(search));
      console.log(`[local-search] indexed ${seen.size} pages into ${searchIndexFile}`);
    },
  };
}
