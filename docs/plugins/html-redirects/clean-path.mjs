/**
 * The clean form of a docs path: `/a/b.html` and `/a/b/index.html` become `/a/b`, and
 * `/index.html` becomes `/`. Any other path is returned unchanged. Shared by the static
 * server and the client so both apply exactly the same rule.
 * @param {string} pathname
 * @returns {string}
 */
export function cleanDocsPath(pathname) {
  let clean = pathname;
  if (clean.endsWith('/index.html')) clean = clean.slice(0, -'index.html'.length);
  else if (clean.endsWith('.html')) clean = clean.slice(0, -'.html'.length);
  else return pathname;
  if (clean.length > 1 && clean.endsWith('/')) clean = clean.slice(0, -1);
  return clean === '' ? '/' : clean;
}
