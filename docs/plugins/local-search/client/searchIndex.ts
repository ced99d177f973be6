import type MiniSearch from 'minisearch';
import { miniSearchOptions, searchDefaults, searchIndexFile } from '../search-options.mjs';

export interface SearchHit {
  id: string;
  url: string;
  title: string;
  excerpt: string;
}

let loading: Promise<MiniSearch> | undefined;

/**
 * Fetches the index once per page load. A failed fetch is forgotten, so the next search
 * tries again (for example after the network comes back).
 */
export function loadSearchIndex(baseUrl: string): Promise<MiniSearch> {
  if (!loading) {
    // MiniSearch is imported here, not at the top, so its code stays out of the bundle
    // every page loads (it only costs the readers who search: Lighthouse blocking time).
    loading = Promise.all([
      import('minisearch'),
      fetch(`${baseUrl}${searchIndexFile}`).then((response) => {
        if (!response.ok) throw new Error(`search index answered ${response.status}`);
        return response.text();
      }),
    ]).then(([{ default: MiniSearchClass }, json]) => MiniSearchClass.loadJSON(json, miniSearchOptions));
    loading.catch(() => {
      loading = undefined;
    });
  }
  return loading;
}

export function runSearch(index: MiniSearch, query: string, limit: number): SearchHit[] {
  if (query.trim().length === 0) return [];
  let results = index.search(query, searchDefaults);
  // Fall back to any-term matching so a query with one unknown word still finds something.
  if (results.length === 0) results = index.search(query, { ...searchDefaults, combineWith: 'OR' });
  return results.slice(0, limit).map((result) => ({
    id: String(result.id),
    url: String(result.url),
    title: String(result.title),
    excerpt: String(result.excerpt ?? ''),
  }));
}

export const fetchFailedTitle = 'Unable to fetch results';
export const fetchFailedHelp = 'You might want to check your network connection.';
