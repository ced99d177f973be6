import Link from '@docusaurus/Link';
import { useLocation } from '@docusaurus/router';
import Layout from '@theme/Layout';
import Loading from '@theme/Loading';
import {
  memo,
  type ReactNode,
  startTransition,
  useCallback,
  useEffect,
  useMemo,
  useRef,
  useState,
} from 'react';
import {
  describeLimits,
  describeType,
  exampleOf,
  listOperations,
  type OpenApiDocument,
  type OperationEntry,
  type Parameter,
  refName,
  resolveRef,
  type Schema,
} from './openapi';
import { ApiServerProvider, useApiServer } from './server';
import styles from './styles.module.css';
import TryIt from './TryIt';

type LoadState =
  | { status: 'loading' }
  | { status: 'failed'; error: Error }
  | { status: 'ready'; document: OpenApiDocument };

interface Props {
  edition: string;
  /** Loads the generated document as its own chunk, so the page shell paints first. */
  load: () => Promise<{ default: unknown }>;
}

/** Whether a schema (or the items of an array schema) has named fields worth listing. */
function hasFields(document: OpenApiDocument, schema: Schema): boolean {
  const resolved = resolveRef(document, schema);
  if (resolved.properties && Object.keys(resolved.properties).length > 0) return true;
  return resolved.items ? Boolean(resolveRef(document, resolved.items).properties) : false;
}

function SchemaView({
  document,
  schema,
  depth = 0,
}: {
  document: OpenApiDocument;
  schema: Schema;
  depth?: number;
}) {
  const resolved = resolveRef(document, schema);
  const properties = Object.entries(resolved.properties ?? {});
  const itemSchema = resolved.items ? resolveRef(document, resolved.items) : undefined;
  const nested = properties.length > 0 ? resolved : itemSchema?.properties ? itemSchema : undefined;
  if (!nested || depth > 4) {
    return <code>{describeType(schema)}</code>;
  }
  return (
    <div>
      {refName(schema) ? <code className={styles.schemaName}>{describeType(schema)}</code> : null}
      <ul className={styles.fields}>
        {Object.entries(nested.properties ?? {}).map(([name, child]) => {
          const limits = describeLimits(resolveRef(document, child));
          return (
            <li key={name}>
              <code>{name}</code>
              {nested.required?.includes(name) ? <span className={styles.required}> required</span> : null}{' '}
              <span className={styles.type}>{describeType(child)}</span>
              {limits.length > 0 ? <span className={styles.limits}> ({limits.join(', ')})</span> : null}
              {resolveRef(document, child).description ? (
                <div>{resolveRef(document, child).description}</div>
              ) : null}
              {hasFields(document, child) ? (
                <SchemaView document={document} schema={child} depth={depth + 1} />
              ) : null}
            </li>
          );
        })}
      </ul>
    </div>
  );
}

function ParametersView({ parameters, label }: { parameters: Parameter[]; label: string }) {
  if (parameters.length === 0) return null;
  return (
    // A labelled tab stop: the table scrolls sideways on narrow screens (Infima makes each table its own scroll
    // box), and a keyboard reader scrolls it with the arrow keys once it has focus.
    // biome-ignore lint/a11y/noNoninteractiveTabindex: the table is its own scroll box; keyboard readers focus it to scroll
    <table className={styles.table} tabIndex={0} aria-label={label}>
      <caption>Parameters</caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">In</th>
          <th scope="col">Type</th>
          <th scope="col">Description</th>
        </tr>
      </thead>
      <tbody>
        {parameters.map((parameter) => (
          <tr key={`${parameter.in}-${parameter.name}`}>
            <td>
              <code>{parameter.name}</code>
              {parameter.required ? <span className={styles.required}> required</span> : null}
            </td>
            <td>{parameter.in}</td>
            <td>
              <code>{parameter.schema ? describeType(parameter.schema) : 'string'}</code>
              {parameter.schema && describeLimits(parameter.schema).length > 0 ? (
                <div className={styles.limits}>{describeLimits(parameter.schema).join(', ')}</div>
              ) : null}
            </td>
            <td>{parameter.description}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * One operation: its title, summary and authentication at once; its parameters, body, responses and Try it once it
 * comes within a screen of the viewport (see watchNear). The page lists every operation, but a reader sees a few at
 * a time, and laying out all their details was most of the page's blocking time on a slow phone.
 */
const OperationView = memo(function OperationView({
  document,
  entry,
}: {
  document: OpenApiDocument;
  entry: OperationEntry;
}) {
  const { operation, method, path } = entry;
  const bodySchema = operation.requestBody?.content?.['application/json']?.schema;
  const authNames = (operation.security ?? []).flatMap((requirement) => Object.keys(requirement));
  const section = useRef<HTMLElement>(null);
  const [detailed, setDetailed] = useState(false);
  useEffect(() => {
    if (detailed || !section.current) return;
    // A transition: React renders the details in slices, so only their DOM insertion is one task.
    return watchNear(section.current, () => startTransition(() => setDetailed(true)));
  }, [detailed]);
  return (
    <section
      ref={section}
      className={styles.operation}
      id={entry.id}
      data-operation={`${method.toUpperCase()} ${path}`}
      aria-busy={detailed ? undefined : true}
    >
      <h3 className={styles.operationTitle}>
        <span className={`${styles.method} ${styles[`method_${method}`] ?? ''}`}>{method.toUpperCase()}</span>{' '}
        <code className={styles.path}>{path}</code>
        {operation.deprecated ? <span className={styles.deprecated}>deprecated</span> : null}
      </h3>
      {operation.summary ? <p className={styles.summary}>{operation.summary}</p> : null}
      {operation.description ? <p>{operation.description}</p> : null}
      <p className={styles.auth}>Authentication: {authNames.length > 0 ? authNames.join(' or ') : 'none'}</p>
      {detailed ? <OperationDetails document={document} entry={entry} bodySchema={bodySchema} /> : null}
    </section>
  );
});

/** The elements waiting to come near the viewport, each with what to do then (once). One observer for all. */
const nearCallbacks = new Map<Element, () => void>();
let nearObserver: IntersectionObserver | undefined;

/**
 * Calls `onNear` once `element` is within a screen's height of the viewport, and returns the way to stop waiting.
 * Scrolling, a link to an operation's anchor and narrowing the filter all bring operations near.
 */
function watchNear(element: Element, onNear: () => void): () => void {
  if (typeof IntersectionObserver === 'undefined') {
    onNear();
    return () => undefined;
  }
  nearObserver ??= new IntersectionObserver(
    (entries) => {
      for (const { target, isIntersecting } of entries) {
        if (!isIntersecting) continue;
        const callback = nearCallbacks.get(target);
        nearCallbacks.delete(target);
        nearObserver?.unobserve(target);
        callback?.();
      }
    },
    { rootMargin: '100% 0px' },
  );
  nearCallbacks.set(element, onNear);
  nearObserver.observe(element);
  return () => {
    nearCallbacks.delete(element);
    nearObserver?.unobserve(element);
  };
}

function OperationDetails({
  document,
  entry,
  bodySchema,
}: {
  document: OpenApiDocument;
  entry: OperationEntry;
  bodySchema: Schema | undefined;
}) {
  const { operation, method, path } = entry;
  return (
    <>
      <ParametersView parameters={entry.parameters} label={`Parameters of ${method.toUpperCase()} ${path}`} />
      {bodySchema ? (
        <div>
          <h4 className={styles.subheading}>
            Request body{operation.requestBody?.required ? ' (required)' : ''}
          </h4>
          <SchemaView document={document} schema={bodySchema} />
        </div>
      ) : null}
      <h4 className={styles.subheading}>Responses</h4>
      <ul className={styles.responses}>
        {Object.entries(operation.responses ?? {}).map(([status, response]) => {
          const schema = response.content?.['application/json']?.schema;
          return (
            <li key={status}>
              <strong>{status}</strong> {response.description}
              {schema ? <SchemaView document={document} schema={schema} /> : null}
            </li>
          );
        })}
      </ul>
      <TryIt
        entry={entry}
        exampleBody={bodySchema ? JSON.stringify(exampleOf(document, bodySchema), null, 2) : undefined}
      />
    </>
  );
}

/** The section an operation is listed under: its first tag. */
const tagOf = (entry: OperationEntry) => entry.operation.tags?.[0] ?? 'other';

const tagAnchor = (tag: string) => tag.replace(/[^A-Za-z0-9]+/g, '-');

/** The reader's `?tag=` choice: one page per tag, the whole document without it. */
function useTagChoice(): [string | undefined, (tag: string | undefined) => string] {
  const location = useLocation();
  const chosen = new URLSearchParams(location.search).get('tag') ?? undefined;
  const href = (tag: string | undefined) =>
    tag ? `${location.pathname}?tag=${encodeURIComponent(tag)}` : location.pathname;
  return [chosen, href];
}

function Reference({ document, edition }: { document: OpenApiDocument; edition: string }) {
  const operations = useMemo(() => listOperations(document), [document]);
  const [filter, setFilter] = useState('');
  const [chosenTag, tagHref] = useTagChoice();
  const allGroups = new Map<string, OperationEntry[]>();
  for (const entry of operations)
    allGroups.set(tagOf(entry), [...(allGroups.get(tagOf(entry)) ?? []), entry]);
  const tag = chosenTag && allGroups.has(chosenTag) ? chosenTag : undefined;
  const needle = filter.trim().toLowerCase();
  const visible = useMemo(
    () =>
      operations.filter(
        (entry) =>
          (!tag || tagOf(entry) === tag) &&
          (!needle ||
            `${entry.method} ${entry.path} ${entry.operation.summary ?? ''} ${(entry.operation.tags ?? []).join(' ')}`
              .toLowerCase()
              .includes(needle)),
      ),
    [operations, tag, needle],
  );
  return (
    <div
      className={`row ${styles.layout}`}
      data-api-reference={edition}
      data-operation-count={operations.length}
    >
      <nav aria-label="API sections" className={`col col--3 ${styles.sidebar}`}>
        <ul className="menu__list">
          <li className="menu__list-item">
            <Link
              className={`menu__link ${tag ? '' : 'menu__link--active'}`}
              to={tagHref(undefined)}
              aria-current={tag ? undefined : 'page'}
            >
              All operations <span className={styles.count}>{operations.length}</span>
            </Link>
          </li>
          {[...allGroups.entries()].map(([name, entries]) => (
            <li key={name} className="menu__list-item">
              <Link
                className={`menu__link ${tag === name ? 'menu__link--active' : ''}`}
                to={tagHref(name)}
                aria-current={tag === name ? 'page' : undefined}
              >
                {name} <span className={styles.count}>{entries.length}</span>
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <div className="col col--9">
        <p>
          Version <strong>{document.info.version}</strong>. {document.info.description} {operations.length}{' '}
          operations{tag ? `; this page shows the ${allGroups.get(tag)?.length ?? 0} of "${tag}"` : ''}.
        </p>
        <ServerSetting />
        <label className={styles.filter}>
          Filter operations{' '}
          <input
            type="search"
            value={filter}
            onChange={(event) => setFilter(event.target.value)}
            placeholder="path, method or tag"
          />
        </label>
        <OperationGroups document={document} visible={visible} />
      </div>
    </div>
  );
}

/**
 * The shown operations under a heading per tag. Memoised apart from the side menu: re-rendering the menu's links
 * makes each of them start watching its visibility again.
 */
const OperationGroups = memo(function OperationGroups({
  document,
  visible,
}: {
  document: OpenApiDocument;
  visible: OperationEntry[];
}) {
  const groups = new Map<string, OperationEntry[]>();
  for (const entry of visible) groups.set(tagOf(entry), [...(groups.get(tagOf(entry)) ?? []), entry]);
  return [...groups.entries()].map(([name, entries]) => (
    <section key={name}>
      <h2 id={`tag-${tagAnchor(name)}`}>{name}</h2>
      {entries.map((entry) => (
        <OperationView key={entry.id} document={document} entry={entry} />
      ))}
    </section>
  ));
});

/** Where "Try it" sends requests: a Gatehouse server the reader names, never this documentation host. */
function ServerSetting() {
  const [server, setServer] = useApiServer();
  return (
    <div className={styles.serverSetting}>
      <label htmlFor="api-server">Server for Try it</label>
      <input
        id="api-server"
        type="url"
        value={server}
        onChange={(event) => setServer(event.target.value)}
        placeholder="https://gatehouse.example.org"
      />
      <p className={styles.serverHint}>
        Requests go from your browser to this server. It must list this site's origin in{' '}
        <code>GATEHOUSE_CORS_ORIGINS</code>.
      </p>
    </div>
  );
}

export default function ApiReferencePage({ edition, load }: Props): ReactNode {
  const [state, setState] = useState<LoadState>({ status: 'loading' });
  const fetchDocument = useCallback(() => {
    setState({ status: 'loading' });
    load().then(
      // A transition as well: the first render of the whole list is sliced too.
      (module) =>
        startTransition(() => setState({ status: 'ready', document: module.default as OpenApiDocument })),
      (error: unknown) =>
        setState({ status: 'failed', error: error instanceof Error ? error : new Error(String(error)) }),
    );
  }, [load]);
  useEffect(fetchDocument, [fetchDocument]);
  const title = `${edition[0]?.toUpperCase()}${edition.slice(1)} API reference`;
  return (
    <Layout title={title} description={`Interactive reference of the Gatehouse ${edition} edition HTTP API.`}>
      <main className={`container container--fluid margin-vert--lg ${styles.page}`}>
        <h1>{title}</h1>
        <p>
          Generated at build time from the server's route tables, so it lists exactly the operations of this
          version. Authenticate with <code>Authorization: Bearer &lt;token&gt;</code> or{' '}
          <code>X-API-Key: &lt;key&gt;</code>.
        </p>
        {state.status === 'failed' ? (
          // The theme's chunk-failure box: the error text in red with a Retry button.
          <Loading error={state.error} retry={fetchDocument} pastDelay timedOut={false} isLoading={false} />
        ) : state.status === 'loading' ? (
          // A viewport of height holds the footer below the fold until the document (always
          // taller) arrives, so nothing visible jumps (Lighthouse measured a 0.8 layout shift).
          <p aria-busy="true" className={styles.loading}>
            Loading the API document…
          </p>
        ) : (
          <ApiServerProvider>
            <Reference document={state.document} edition={edition} />
          </ApiServerProvider>
        )}
      </main>
    </Layout>
  );
}
