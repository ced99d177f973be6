import {
  type ColumnDef,
  flexRender,
  getCoreRowModel,
  type SortingState,
  useReactTable,
} from '@tanstack/react-table';
import { type DependencyList, type Dispatch, type ReactNode, type SetStateAction, useState } from 'react';
import type { Page } from '../api/types';
import { type Resource, useResource } from '../resource';
import { Button } from './controls';
import { ErrorState, Loading } from './feedback';
import { ScrollFrame } from './scroll-frame';

export interface TableQuery {
  page: number;
  perPage: number;
  sortBy?: string;
  order: 'asc' | 'desc';
}

/** Paging and sort state for a server-side table; page numbers start at 1 as the API does. */
export function useTableQuery(initial: Partial<TableQuery> = {}) {
  const [query, setQuery] = useState<TableQuery>({ page: 1, perPage: 10, order: 'desc', ...initial });
  return [query, setQuery] as const;
}

/** What a paged list gives its DataTable: the page, its loading state and error, and the paging it was asked for. */
export interface PagedTableProps<T> {
  page: Page<T> | undefined;
  loading: boolean;
  error: string | null;
  onRetry: () => void;
  query: TableQuery;
  onQuery: (next: TableQuery) => void;
}

/**
 * A server-paged list: the paging and sort the person chose, the page loaded for them (again whenever they or `deps`
 * change), and the props that wire both into a DataTable (`<DataTable {...list.table} ... />`).
 */
export function usePagedList<T>(
  load: (query: TableQuery) => Promise<Page<T>>,
  deps: DependencyList,
  initial: Partial<TableQuery> = {},
): {
  query: TableQuery;
  setQuery: Dispatch<SetStateAction<TableQuery>>;
  list: Resource<Page<T>>;
  table: PagedTableProps<T>;
} {
  const [query, setQuery] = useTableQuery(initial);
  const list = useResource(
    () => load(query),
    [...deps, query.page, query.perPage, query.sortBy, query.order],
  );
  return {
    query,
    setQuery,
    list,
    table: {
      page: list.data,
      loading: list.loading,
      error: list.error,
      onRetry: list.reload,
      query,
      onQuery: setQuery,
    },
  };
}

/** The name a card shows beside a cell: the column's `meta.label`, else its header when that is text. */
// biome-ignore lint/suspicious/noExplicitAny: as for DataTable's columns
function cellLabel(column: ColumnDef<any, any>): string | undefined {
  const meta = column.meta as { label?: string } | undefined;
  if (meta?.label !== undefined) return meta.label || undefined;
  return typeof column.header === 'string' ? column.header : undefined;
}

/**
 * A @tanstack/react-table table whose filtering, sorting and paging happen on the server: the table only
 * renders the page it was given and reports what the person asked for.
 */
export function DataTable<T>({
  label,
  columns,
  page,
  loading,
  error,
  onRetry,
  query,
  onQuery,
  empty,
  rowKey,
  cards,
}: {
  label: string;
  // biome-ignore lint/suspicious/noExplicitAny: column value types differ per column, as react-table declares
  columns: ColumnDef<T, any>[];
  page: Page<T> | undefined;
  loading: boolean;
  error: string | null;
  onRetry?: () => void;
  query?: TableQuery;
  onQuery?: (next: TableQuery) => void;
  empty: ReactNode;
  rowKey: (row: T) => string;
  /**
   * On a narrow screen (560 px and less) each row is a card: its cells stacked, each named by its column's
   * `meta.label` (or a string header), the actions last and wrapping. Without it the table scrolls in its frame.
   */
  cards?: boolean;
}) {
  const sorting: SortingState = query?.sortBy ? [{ id: query.sortBy, desc: query.order === 'desc' }] : [];
  const table = useReactTable({
    data: page?.items ?? [],
    columns,
    getCoreRowModel: getCoreRowModel(),
    manualPagination: true,
    manualSorting: true,
    manualFiltering: true,
    enableSorting: Boolean(onQuery),
    rowCount: page?.total ?? 0,
    state: { sorting },
    getRowId: rowKey,
    onSortingChange: (updater) => {
      if (!query || !onQuery) return;
      const next = typeof updater === 'function' ? updater(sorting) : updater;
      const first = next[0];
      onQuery({ ...query, page: 1, sortBy: first?.id, order: first?.desc === false ? 'asc' : 'desc' });
    },
  });

  if (error) return <ErrorState message={error} onRetry={onRetry} />;
  if (!page && loading) return <Loading />;
  if (page && page.items.length === 0) return <>{empty}</>;

  const total = page?.total ?? 0;
  const pages = query ? Math.max(1, Math.ceil(total / query.perPage)) : 1;
  return (
    <div aria-busy={loading || undefined}>
      <ScrollFrame label={label}>
        <table className={cards ? 'table table-cards' : 'table'} aria-label={label}>
          <thead>
            {table.getHeaderGroups().map((group) => (
              <tr key={group.id}>
                {group.headers.map((header) => {
                  const sorted = header.column.getIsSorted();
                  const canSort = header.column.getCanSort();
                  const content = flexRender(header.column.columnDef.header, header.getContext());
                  return (
                    <th
                      key={header.id}
                      aria-sort={sorted ? (sorted === 'desc' ? 'descending' : 'ascending') : undefined}
                      className={header.column.id === 'actions' ? 'actions' : undefined}
                    >
                      {canSort ? (
                        <button
                          type="button"
                          className="sort"
                          onClick={header.column.getToggleSortingHandler()}
                        >
                          {content}
                          <span aria-hidden="true">
                            {sorted === 'desc' ? '↓' : sorted === 'asc' ? '↑' : '↕'}
                          </span>
                        </button>
                      ) : (
                        content
                      )}
                    </th>
                  );
                })}
              </tr>
            ))}
          </thead>
          <tbody>
            {table.getRowModel().rows.map((row) => (
              <tr key={row.id}>
                {row.getVisibleCells().map((cell) => (
                  <td
                    key={cell.id}
                    className={cell.column.id === 'actions' ? 'actions' : undefined}
                    data-label={cards ? cellLabel(cell.column.columnDef) : undefined}
                  >
                    {flexRender(cell.column.columnDef.cell, cell.getContext())}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollFrame>
      {query && onQuery ? (
        <nav className="pager" aria-label={`${label} pages`}>
          <span>
            {total === 0
              ? 'No results'
              : `${(query.page - 1) * query.perPage + 1}–${Math.min(query.page * query.perPage, total)} of ${total}`}
          </span>
          <div className="row">
            <label className="row">
              <span>Rows per page</span>
              <select
                className="input"
                style={{ width: 76, height: 30 }}
                value={query.perPage}
                onChange={(e) => onQuery({ ...query, page: 1, perPage: Number(e.target.value) })}
              >
                {[10, 20, 50, 100].map((n) => (
                  <option key={n} value={n}>
                    {n}
                  </option>
                ))}
              </select>
            </label>
            <Button
              size="sm"
              disabled={query.page <= 1}
              onClick={() => onQuery({ ...query, page: query.page - 1 })}
            >
              Previous
            </Button>
            <span>
              Page {query.page} of {pages}
            </span>
            <Button
              size="sm"
              disabled={query.page >= pages}
              onClick={() => onQuery({ ...query, page: query.page + 1 })}
            >
              Next
            </Button>
          </div>
        </nav>
      ) : null}
    </div>
  );
}
