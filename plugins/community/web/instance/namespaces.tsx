import {
  Card,
  createColumnHelper,
  DataTable,
  Empty,
  formatDate,
  icons,
  PageHeader,
  TextField,
  useApi,
  usePagedList,
} from '@gatehouse/console';
import { useMemo, useState } from 'react';
import { calls } from '../api';
import type { AdminNamespace } from '../types';

/** Instance, Namespaces: every namespace of the instance, its owner, members and devices. */
export function InstanceNamespacesPage() {
  const api = useApi();
  const [search, setSearch] = useState('');
  const {
    query,
    setQuery,
    table: namespacesTable,
  } = usePagedList(
    (query) =>
      api.page<AdminNamespace>(calls.adminListNamespaces, {
        query: { page: query.page, per_page: query.perPage, ...(search ? { search } : {}) },
      }),
    [api, search],
  );
  const column = createColumnHelper<AdminNamespace>();
  // Three columns, each with its detail under it, so the table fits a phone screen without scrolling sideways.
  const columns = useMemo(
    () => [
      column.accessor('name', {
        header: 'Namespace',
        enableSorting: false,
        cell: (ctx) => (
          <div>
            <strong>{ctx.getValue()}</strong>
            <div className="muted" style={{ fontSize: 13 }}>
              created {formatDate(ctx.row.original.created_at)}
            </div>
          </div>
        ),
      }),
      column.accessor('owner_username', {
        header: 'Owner',
        enableSorting: false,
        cell: (ctx) => (
          <div>
            {ctx.getValue()}
            <div className="muted" style={{ fontSize: 13 }}>
              {ctx.row.original.members} {ctx.row.original.members === 1 ? 'member' : 'members'}
            </div>
          </div>
        ),
      }),
      column.display({
        id: 'devices',
        header: 'Devices',
        cell: (ctx) =>
          `${ctx.row.original.device_count} of ${ctx.row.original.max_devices === -1 ? 'unlimited' : ctx.row.original.max_devices}`,
      }),
    ],
    [],
  );
  return (
    <>
      <PageHeader
        title="Namespaces"
        description={
          <>
            Every namespace of this instance. Change a device limit with{' '}
            <code>gatehouse namespace set-max-devices</code>.
          </>
        }
      />
      <Card>
        <div style={{ maxWidth: 360, marginBottom: 12 }}>
          <TextField
            label="Search namespaces"
            type="search"
            value={search}
            onChange={(e) => {
              setSearch(e.target.value);
              setQuery({ ...query, page: 1 });
            }}
          />
        </div>
        <DataTable
          label="Namespaces"
          columns={columns}
          {...namespacesTable}
          rowKey={(n) => n.tenant_id}
          empty={
            <Empty title="No namespaces match" icon={icons.users}>
              Try another search.
            </Empty>
          }
        />
      </Card>
    </>
  );
}
