import Link from '@docusaurus/Link';
import { useHistory } from '@docusaurus/router';
import useBaseUrl from '@docusaurus/useBaseUrl';
import { type KeyboardEvent, type ReactNode, useCallback, useEffect, useId, useRef, useState } from 'react';
import {
  fetchFailedHelp,
  fetchFailedTitle,
  loadSearchIndex,
  runSearch,
  type SearchHit,
} from '../../client/searchIndex';
import styles from './styles.module.css';

type State =
  | { status: 'idle' }
  | { status: 'loading' }
  | { status: 'failed' }
  | { status: 'ready'; hits: SearchHit[] };

function SearchModal({ onClose }: { onClose: () => void }) {
  const baseUrl = useBaseUrl('/');
  const history = useHistory();
  const inputRef = useRef<HTMLInputElement>(null);
  const [query, setQuery] = useState('');
  const [state, setState] = useState<State>({ status: 'idle' });
  const [active, setActive] = useState(0);
  const listId = useId();

  useEffect(() => {
    inputRef.current?.focus();
  }, []);

  useEffect(() => {
    let current = true;
    if (query.trim() === '') {
      setState({ status: 'idle' });
      return;
    }
    setState((previous) => (previous.status === 'ready' ? previous : { status: 'loading' }));
    loadSearchIndex(baseUrl).then(
      (index) => {
        if (current) {
          setState({ status: 'ready', hits: runSearch(index, query, 8) });
          setActive(0);
        }
      },
      () => {
        if (current) setState({ status: 'failed' });
      },
    );
    return () => {
      current = false;
    };
  }, [query, baseUrl]);

  const hits = state.status === 'ready' ? state.hits : [];
  const open = (hit: SearchHit) => {
    onClose();
    history.push(hit.url);
  };
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === 'Escape') onClose();
    else if (event.key === 'ArrowDown') setActive((i) => Math.min(i + 1, hits.length - 1));
    else if (event.key === 'ArrowUp') setActive((i) => Math.max(i - 1, 0));
    else if (event.key === 'Enter' && hits[active]) open(hits[active]);
    else return;
    event.preventDefault();
  };

  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: the backdrop closes the dialog on click, as DocSearch does
    <div className={styles.backdrop} onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div className={styles.modal} role="dialog" aria-modal="true" aria-label="Search the documentation">
        <input
          ref={inputRef}
          className={styles.input}
          type="search"
          placeholder="Search the docs"
          aria-label="Search the docs"
          aria-controls={listId}
          value={query}
          onChange={(event) => setQuery(event.target.value)}
          onKeyDown={onKeyDown}
        />
        <div className={styles.body}>
          {state.status === 'failed' ? (
            <div className={styles.message} role="alert">
              <p className={styles.messageTitle}>{fetchFailedTitle}</p>
              <p>{fetchFailedHelp}</p>
            </div>
          ) : state.status === 'loading' ? (
            <p className={styles.message}>Searching…</p>
          ) : state.status === 'ready' && hits.length === 0 ? (
            <p className={styles.message}>No results for “{query}”.</p>
          ) : (
            <ul id={listId} className={styles.hits} aria-label="Search results">
              {hits.map((hit, i) => (
                <li
                  key={hit.id}
                  id={`${listId}-${i}`}
                  className={i === active ? styles.activeHit : undefined}
                >
                  <Link to={hit.url} onClick={onClose} className={styles.hitLink}>
                    <span className={styles.hitTitle}>{hit.title}</span>
                    <span className={styles.hitExcerpt}>{hit.excerpt}</span>
                  </Link>
                </li>
              ))}
            </ul>
          )}
        </div>
        <div className={styles.footer}>
          {query.trim() ? (
            <Link to={`/search?q=${encodeURIComponent(query)}`} onClick={onClose}>
              See all results
            </Link>
          ) : (
            <span>Type to search. Ctrl+K or / opens search anywhere.</span>
          )}
          <button type="button" className="button button--sm button--secondary" onClick={onClose}>
            Close
          </button>
        </div>
      </div>
    </div>
  );
}

export default function SearchBar(): ReactNode {
  const [open, setOpen] = useState(false);
  const close = useCallback(() => setOpen(false), []);
  const baseUrl = useBaseUrl('/');

  useEffect(() => {
    const onKey = (event: globalThis.KeyboardEvent) => {
      const target = event.target as HTMLElement | null;
      const typing =
        target && (target.tagName === 'INPUT' || target.tagName === 'TEXTAREA' || target.isContentEditable);
      if ((event.key === 'k' && (event.ctrlKey || event.metaKey)) || (event.key === '/' && !typing)) {
        event.preventDefault();
        setOpen(true);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  return (
    <>
      <button
        type="button"
        className={styles.button}
        // The name is the visible text ("Search", and the shortcut where it shows), never a different label.
        aria-keyshortcuts="Control+K"
        onClick={() => setOpen(true)}
        // Start fetching the index when the reader shows intent, so the first search is quick.
        onMouseEnter={() => void loadSearchIndex(baseUrl).catch(() => undefined)}
        onFocus={() => void loadSearchIndex(baseUrl).catch(() => undefined)}
      >
        <svg width="16" height="16" viewBox="0 0 20 20" aria-hidden="true">
          <path
            d="M14.386 14.386l4.088 4.088-4.088-4.088A7.533 7.533 0 1 1 3.733 3.733a7.533 7.533 0 0 1 10.653 10.653z"
            stroke="currentColor"
            fill="none"
            strokeWidth="2"
            strokeLinecap="round"
            strokeLinejoin="round"
          />
        </svg>
        <span className={styles.buttonLabel}>Search</span>
        <kbd className={styles.kbd}>Ctrl K</kbd>
      </button>
      {open ? <SearchModal onClose={close} /> : null}
    </>
  );
}
