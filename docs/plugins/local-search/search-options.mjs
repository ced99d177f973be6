// Shared by the index builder (postBuild, Node) and the browser, which must load the
// serialised index with exactly the options it was built with.
export const searchIndexFile = 'search-index.json';

export const miniSearchOptions = {
  idField: 'id',
  fields: ['title', 'headings', 'text'],
  storeFields: ['title', 'url', 'excerpt'],
};

/** @type {import('minisearch').SearchOptions} */
export const searchDefaults = {
  prefix: true,
  fuzzy: 0.2,
  boost: { title: 4, headings: 2 },
  combineWith: 'AND',
};
