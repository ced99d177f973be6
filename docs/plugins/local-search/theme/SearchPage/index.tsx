import Link from '@docusaurus/Link';
import { useHistory, useLocation } from '@docusaurus/router';
import useBaseUrl from '@docusaurus/useBaseUrl';
import Layout from '@theme/Layout';
import { type ReactNode, useEffect, useState } from 'react';
import {
  fetchFailedHelp,
  fetchFailedTitle,
  loadSearchIndex,
  runSearch,
  type SearchHit,
} from '../../client/searchIndex';

type State =
  | { status: 'idle' }
  | { status: 'loading' }
  | { status: 'failed' }
  | { status: 'ready'; hits: SearchHit[] };

export default function SearchPage(): ReactNode {
  const location = useLocation();
  const history = useHistory();
  const baseUrl = useBaseUrl('/');
  const query = new URLSearchParams(location.search).get('q') ?? '';
  const [draft, setDraft] = useState(query);
  const [state, setState] = useState<State>({ status: 'idle' });

  useEffect(() => setDraft(query), [query]);
  useEffect(() => {
    let current = true;
    if (!query.trim()) {
      setState({ status: 'idle' });
      return;
    }
    setState({ status: 'loading' });
    loadSearchIndex(baseUrl).then(
      (index) => current && setState({ status: 'ready', hits: runSearch(index, query, 50) }),
      () => current && setState({ status: 'failed' }),
    );
    return () => {
      current = false;
    };
  }, [query, baseUrl]);

  return (
    <Layout title={query ? `Search results for "${query}"` : 'Search the documentation'}>
      <main className="container margin-vert--lg">
        <h1>{query ? `Search results for “${query}”` : 'Search the documentation'}</h1>
        <search>
          <form
            onSubmit={(event) => {
              event.preventDefault();
              history.replace(`?q=${encodeURIComponent(draft)}`);
            }}
          >
            <input
              type="search"
              aria-label="Search the docs"
              value={draft}
              onChange={(event) => setDraft(event.target.value)}
              style={{ width: '100%', maxWidth: '40rem', fontSize: '1.1rem', padding: '0.5rem 0.75rem' }}
            />
          </form>
        </search>
        <div className="margin-vert--md">
          {state.status === 'failed' ? (
            <div role="alert">
              <p>
                <strong>{fetchFailedTitle}</strong>
              </p>
              <p>{fetchFailedHelp}</p>
            </div>
          ) : state.status === 'loading' ? (
            <p>Searching…</p>
          ) : state.status === 'ready' ? (
            state.hits.length === 0 ? (
              <p>No results.</p>
            ) : (
              <>
                <p>
                  {state.hits.length} {state.hits.length === 1 ? 'page' : 'pages'} found.
                </p>
                <ol>
                  {state.hits.map((hit) => (
                    <li key={hit.id} className="margin-bottom--md">
                      <Link to={hit.url}>
                        <strong>{hit.title}</strong>
                      </Link>
                      <div>{hit.excerpt}</div>
                    </li>
                  ))}
                </ol>
              </>
            )
          ) : null}
        </div>
      </main>
    </Layout>
  );
}
