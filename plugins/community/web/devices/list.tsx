import {
  Alert,
  Button,
  Card,
  createColumnHelper,
  DataTable,
  Dialog,
  Empty,
  encodeFilter,
  errorText,
  formatRelative,
  icons,
  Link,
  PageHeader,
  TextField,
  useAction,
  useApi,
  useCan,
  useConsole,
  useLocation,
  useNavigate,
  usePagedList,
  useResource,
  useToast,
  useUser,
} from '@gatehouse/console';
import { type ReactNode, useEffect, useMemo, useState } from 'react';
import { calls } from '../api';
import { useLiveRefresh } from '../live';
import type { Device, DeviceStatus, Namespace } from '../types';
import { type DeviceDialog, DeviceDialogs } from './dialogs';
import { byOsId, type Filters, filterSearch, fleetFilter, noFilters, readFilters } from './filters';
import { InstallCommands } from './install';
import { containerKind, type DeviceKind, deviceKind } from './kind';
import { noteAccepted, useRefreshWhileWaiting, waitingForAgent } from './waiting';

// One tab per device status, so that removed and unused devices can be found and accepted again too.
const views: { status: DeviceStatus; label: string }[] = [
  { status: 'accepted', label: 'Accepted' },
  { status: 'pending', label: 'Pending' },
  { status: 'rejected', label: 'Rejected' },
  { status: 'removed', label: 'Removed' },
  { status: 'unused', label: 'Unused' },
];

export function StatusBadge({ device }: { device: Device }) {
  if (waitingForAgent(device)) {
    return (
      <span className="badge badge-warn">
        <span className="dot" aria-hidden="true" /> Waiting for the agent
      </span>
    );
  }
  if (device.status === 'accepted') {
    return device.online ? (
      <span className="badge badge-ok">
        <span className="dot dot-online" aria-hidden="true" /> Online
      </span>
    ) : (
      <span className="badge">
        <span className="dot" aria-hidden="true" /> Offline
      </span>
    );
  }
  if (device.status === 'pending') return <span className="badge badge-warn">Pending</span>;
  if (device.status === 'rejected') return <span className="badge badge-danger">Rejected</span>;
  return (
    <span className="badge">{views.find((v) => v.status === device.status)?.label ?? device.status}</span>
  );
}

/** Why a pending device cannot be accepted (the namespace device limit). */
export function limitExplanation(namespace: Namespace | undefined): string {
  const max = namespace?.max_devices;
  return max && max > 0
    ? `This namespace may have ${max} accepted devices and has reached that limit. Only devices removed in the last 30 days can come back; remove an accepted device to make room.`
    : 'The namespace device limit is reached. Only devices removed in the last 30 days can come back; remove an accepted device to make room.';
}

/** Why a pending device carries the identity of an accepted one: it is another device, with another key. */
export function conflictExplanation(device: Device): string {
  const other = device.identity_conflict;
  if (!other) return '';
  return (
    `The accepted device ${other.name} has the same identity (${device.identity?.mac ?? 'MAC'}) but another key. This is ` +
    `a different device: a reinstalled agent, or someone impersonating ${other.name}. Accepting it does not ` +
    `replace ${other.name}; if ${other.name} was reinstalled, remove it first.`
  );
}

export function useDebounced<T>(value: T, ms: number): T {
  const [debounced, setDebounced] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setDebounced(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return debounced;
}

/** What one bulk action did: how many devices it changed and, per device, why it could not change the others. */
interface BulkResult {
  label: string;
  done: number;
  failed: { uid: string; name: string; message: string }[];
}

function DeviceList({
  kind,
  status,
  filters,
  setFilters,
  counts,
  onChanged,
}: {
  kind: DeviceKind;
  status: DeviceStatus;
  filters: Filters;
  setFilters: (f: Filters) => void;
  counts: Partial<Record<DeviceStatus, number>> | undefined;
  onChanged: () => void;
}) {
  const api = useApi();
  const user = useUser();
  const { slots } = useConsole();
  const toast = useToast();
  const [search, setSearch] = useState(filters.q);
  const term = useDebounced(search.trim(), 250);
  const [dialog, setDialog] = useState<DeviceDialog>(null);
  const action = useAction();
  const can = useCan();
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [bulk, setBulk] = useState<'tag' | 'remove' | null>(null);
  const [bulkTag, setBulkTag] = useState('');
  const [bulkBusy, setBulkBusy] = useState(false);
  const [bulkResult, setBulkResult] = useState<BulkResult | null>(null);

  useEffect(() => {
    if (term !== filters.q) setFilters({ ...filters, q: term });
  }, [term]);
  useEffect(() => {
    if (filters.q !== term) setSearch(filters.q);
  }, [filters.q]);
  const [fieldValue, setFieldValue] = useState(filters.value);
  const fieldTerm = useDebounced(fieldValue.trim(), 250);
  useEffect(() => {
    if (fieldTerm !== filters.value && filters.field) setFilters({ ...filters, value: fieldTerm });
  }, [fieldTerm]);
  useEffect(() => {
    if (filters.value !== fieldTerm) setFieldValue(filters.value);
  }, [filters.value]);
  const filtered = Boolean(
    filters.q ||
      filters.tag ||
      filters.os ||
      (filters.online && status === 'accepted') ||
      (filters.field && filters.value),
  );
  const filter = encodeFilter(fleetFilter(filters, status));
  const {
    setQuery,
    list: devices,
    table: devicesTable,
  } = usePagedList(
    (query) =>
      api.page<Device>(kind.calls.list, {
        query: {
          status,
          page: query.page,
          per_page: query.perPage,
          sort_by: query.sortBy,
          order_by: query.order,
          filter,
        },
      }),
    [api, kind, status, filter, user.tenant],
    { sortBy: 'last_seen', order: 'desc' },
  );

  useEffect(() => setQuery((q) => ({ ...q, page: 1 })), [status, filter]);
  // A sort by a custom field that is no longer shown goes back to the default order.
  useEffect(
    () =>
      setQuery((q) =>
        (q.sortBy ?? '').startsWith('custom_fields.') && q.sortBy !== `custom_fields.${filters.field}`
          ? { ...q, sortBy: 'last_seen', order: 'desc' }
          : q,
      ),
    [filters.field],
  );
  useEffect(() => setSelected(new Set()), [status, filter]);
  useEffect(() => setBulkResult(null), [status]);
  const tagChoices = useResource(
    async () => (await api.call<string[] | null>(calls.listTags)) ?? [],
    [api, user.tenant],
  );
  const osChoices = useResource(
    () =>
      api.call<{ id: string; pretty_name: string; count: number }[]>(kind.calls.os, { query: { status } }),
    [api, kind, status, user.tenant],
  );
  const fieldChoices = useResource(
    () => api.call<{ key: string; count: number }[]>(kind.calls.fieldKeys, { query: { status } }),
    // Read once per tab: it reads every device's fields, and fields are set on the device page, not here.
    [api, kind, status, user.tenant],
  );
  const namespace = useResource(
    () => api.call<Namespace>(calls.getNamespace, { params: { tenant: user.tenant } }),
    [api, user.tenant, devices.data],
  );
  const atLimit = devices.data?.items.some((d) => d.status !== 'accepted' && d.acceptable === false) ?? false;
  useRefreshWhileWaiting(devices.data?.items.some((d) => waitingForAgent(d)) ?? false, devices.reload);
  useLiveRefresh(devices.reload, (e) => e.kind.startsWith('device.'));

  const changeStatus = async (device: Device, to: 'accept' | 'reject') => {
    const ok = await action.run(() =>
      to === 'accept'
        ? api.call(kind.calls.accept, {
            params: { uid: device.uid },
            context: `Could not accept ${device.name}`,
          })
        : api.call(kind.calls.status, {
            params: { uid: device.uid, status: 'reject' },
            context: `Could not reject ${device.name}`,
          }),
    );
    if (ok) {
      if (to === 'accept') noteAccepted(device.uid);
      toast(to === 'accept' ? `${device.name} accepted` : `${device.name} rejected`);
      devices.reload();
    }
  };

  const rows = devices.data?.items ?? [];
  const chosen = rows.filter((d) => selected.has(d.uid));
  const acceptCan = can(kind.calls.accept, `accept ${kind.noun}s`);
  const rejectCan = can(kind.calls.status, `reject ${kind.noun}s`);
  const tagCan = can(kind.calls.addTag, `tag ${kind.noun}s`);
  const removeCan = can(kind.calls.remove, `remove ${kind.noun}s`);
  // Selecting is offered where the role may take at least one bulk action on this tab.
  const selectable = acceptCan.allowed || rejectCan.allowed || tagCan.allowed || removeCan.allowed;
  const toggle = (uid: string, on: boolean) =>
    setSelected((prev) => {
      const next = new Set(prev);
      if (on) next.add(uid);
      else next.delete(uid);
      return next;
    });

  /** Runs one call per chosen device in turn; what failed stays selected and is listed, device by device. */
  const runBulk = async (label: string, targets: Device[], one: (d: Device) => Promise<unknown>) => {
    setBulkBusy(true);
    setBulkResult(null);
    const failed: BulkResult['failed'] = [];
    let done = 0;
    for (const d of targets) {
      try {
        await one(d);
        done++;
      } catch (err) {
        failed.push({ uid: d.uid, name: d.name, message: errorText(err) });
      }
    }
    setBulkBusy(false);
    setBulkResult({ label, done, failed });
    if (done > 0) toast(`${label}: ${done} ${done === 1 ? kind.noun : `${kind.noun}s`}`);
    devices.reload();
    onChanged();
  };
  const bulkAccept = () =>
    runBulk('Accepted', chosen, async (d) => {
      await api.call(kind.calls.accept, { params: { uid: d.uid } });
      noteAccepted(d.uid);
    });
  const bulkReject = () =>
    runBulk('Rejected', chosen, (d) =>
      api.call(kind.calls.status, { params: { uid: d.uid, status: 'reject' } }),
    );
  const bulkRemove = () =>
    runBulk('Removed', chosen, (d) => api.call(kind.calls.remove, { params: { uid: d.uid } }));
  const bulkAddTag = (tag: string) =>
    runBulk(`Tagged ${tag}`, chosen, async (d) => {
      // A device that has the tag already has what was asked.
      if ((d.tags ?? []).includes(tag)) return;
      await api.call(kind.calls.addTag, { params: { uid: d.uid }, body: { tag } });
    });
  const bulkTagProblem =
    bulkTag.trim().length < 3 || bulkTag.trim().length > 255 ? 'A tag has 3 to 255 characters.' : null;

  const column = createColumnHelper<Device>();
  const columns = useMemo(
    () => [
      ...(selectable
        ? [
            column.display({
              id: 'select',
              meta: { label: '' },
              header: () => (
                <input
                  type="checkbox"
                  aria-label={`Select every ${kind.noun} on this page`}
                  checked={rows.length > 0 && rows.every((d) => selected.has(d.uid))}
                  onChange={(e) =>
                    setSelected(e.target.checked ? new Set(rows.map((d) => d.uid)) : new Set())
                  }
                />
              ),
              cell: (ctx) => (
                <input
                  type="checkbox"
                  aria-label={`Select ${ctx.row.original.name}`}
                  checked={selected.has(ctx.row.original.uid)}
                  onChange={(e) => toggle(ctx.row.original.uid, e.target.checked)}
                />
              ),
            }),
          ]
        : []),
      column.accessor('name', {
        header: 'Name',
        cell: (ctx) => (
          <div style={{ overflowWrap: 'anywhere', minWidth: 80 }}>
            <Link to={kind.detailsPath(ctx.row.original.uid)}>{ctx.getValue()}</Link>
            {ctx.row.original.remote_addr ? (
              <div className="faint mono" style={{ fontSize: 12 }}>
                {ctx.row.original.remote_addr}
              </div>
            ) : null}
          </div>
        ),
      }),
      // State and last seen share a column (sorted by last seen), so that a row's actions fit at 1280 px.
      column.accessor('last_seen', {
        header: 'State, last seen',
        cell: (ctx) => (
          <div className="row state-cell" style={{ gap: 6, flexWrap: 'wrap', minWidth: 110 }}>
            <StatusBadge device={ctx.row.original} />
            {ctx.row.original.status !== 'accepted' && ctx.row.original.acceptable === false ? (
              <span className="badge badge-warn" title={limitExplanation(namespace.data)}>
                Limit reached
              </span>
            ) : null}
            {ctx.row.original.identity_conflict ? (
              <span className="badge badge-danger" title={conflictExplanation(ctx.row.original)}>
                Another key
              </span>
            ) : null}
            <span className="faint" style={{ fontSize: 12 }} title={ctx.getValue() ?? ''}>
              {formatRelative(ctx.getValue())}
            </span>
          </div>
        ),
      }),
      column.accessor((d) => d.info?.pretty_name ?? '', {
        id: 'info.pretty_name',
        header: 'Operating system',
        enableSorting: false,
        cell: (ctx) => <span>{ctx.getValue() || 'Unknown'}</span>,
      }),
      ...(filters.field
        ? [
            // Own keys only: a field named like an Object.prototype member must not read that member.
            column.accessor(
              (d) =>
                Object.hasOwn(d.custom_fields ?? {}, filters.field) ? d.custom_fields[filters.field] : '',
              {
                id: `custom_fields.${filters.field}`,
                header: filters.field,
                cell: (ctx) => (
                  <span style={{ overflowWrap: 'anywhere' }}>
                    {ctx.getValue() || <span className="faint">—</span>}
                  </span>
                ),
              },
            ),
          ]
        : []),
      column.accessor((d) => d.tags ?? [], {
        id: 'tags',
        header: 'Tags',
        enableSorting: false,
        cell: (ctx) => (
          <div className="row" style={{ gap: 4, flexWrap: 'wrap' }}>
            {ctx.getValue().length === 0 ? <span className="faint">—</span> : null}
            {ctx.getValue().map((t) => (
              <span key={t} className="badge badge-accent">
                {t}
              </span>
            ))}
          </div>
        ),
      }),
      column.display({
        id: 'actions',
        header: () => <span className="sr-only">Actions</span>,
        cell: (ctx) => {
          const d = ctx.row.original;
          const accept = can(kind.calls.accept, `accept ${kind.noun}s`);
          return (
            <div className="row" style={{ justifyContent: 'flex-end', gap: 6, flexWrap: 'nowrap' }}>
              {d.status !== 'accepted' ? (
                <Button
                  size="sm"
                  variant="primary"
                  disabled={!accept.allowed || d.acceptable === false || action.pending}
                  title={
                    accept.reason || (d.acceptable === false ? limitExplanation(namespace.data) : undefined)
                  }
                  onClick={() => changeStatus(d, 'accept')}
                  aria-label={`Accept ${d.name}`}
                >
                  Accept
                </Button>
              ) : null}
              {d.status === 'pending' ? (
                <Button
                  size="sm"
                  {...can(kind.calls.status, `reject ${kind.noun}s`).gate}
                  onClick={() => changeStatus(d, 'reject')}
                  aria-label={`Reject ${d.name}`}
                >
                  Reject
                </Button>
              ) : null}
              {d.status === 'accepted' ? (
                <Link
                  className="btn btn-sm"
                  to={`${kind.detailsPath(d.uid)}/terminal`}
                  aria-label={`Connect to ${d.name}`}
                  aria-disabled={!d.online || undefined}
                >
                  {icons.terminal} Connect
                </Link>
              ) : null}
              {d.status === 'accepted' ? (
                <>
                  <Button
                    size="sm"
                    variant="ghost"
                    {...can(kind.calls.update, `rename ${kind.noun}s`).gate}
                    onClick={() => setDialog({ kind: 'rename', device: d })}
                    aria-label={`Rename ${d.name}`}
                  >
                    Rename
                  </Button>
                  <Button
                    size="sm"
                    variant="ghost"
                    {...can(kind.calls.tags, `change the tags of ${kind.noun}s`).gate}
                    onClick={() => setDialog({ kind: 'tags', device: d })}
                    aria-label={`Edit tags of ${d.name}`}
                  >
                    Tags
                  </Button>
                </>
              ) : null}
              {d.status !== 'removed' ? (
                <Button
                  size="sm"
                  variant="ghost"
                  {...can(kind.calls.remove, `remove ${kind.noun}s`).gate}
                  onClick={() => setDialog({ kind: 'remove', device: d })}
                  aria-label={`Remove ${d.name}`}
                >
                  Remove
                </Button>
              ) : null}
            </div>
          );
        },
      }),
    ],
    [kind, namespace.data, action.pending, can, selectable, rows, selected, filters.field],
  );

  const waiting = counts?.pending ?? 0;
  const emptyText: Record<string, { title: string; body: ReactNode }> = {
    accepted: {
      title: `No accepted ${kind.noun}s yet`,
      body:
        waiting > 0 ? (
          <>
            {waiting === 1 ? `1 ${kind.noun} waits` : `${waiting} ${kind.noun}s wait`} under Pending for you
            to accept. <Link to={`${kind.listPath}/pending`}>Review pending {kind.noun}s</Link>
          </>
        ) : kind === deviceKind ? (
          'Install the agent on a machine with one of these commands; it shows up under Pending, ready to accept.'
        ) : (
          'Add a connector to a container engine under Connectors: its running containers show up under Pending, ready to accept.'
        ),
    },
    pending: {
      title: `Nothing waiting`,
      body:
        kind === deviceKind
          ? 'Devices whose agent has registered appear here until you accept or reject them.'
          : "Running containers of your connectors' engines appear here until you accept or reject them.",
    },
    rejected: {
      title: `No rejected ${kind.noun}s`,
      body: `${kind.plural} you reject are kept here; you can accept them later.`,
    },
    removed: {
      title: `No removed ${kind.noun}s`,
      body: `${kind.plural} you remove are kept here; you can accept them again. One that was accepted keeps its slot for 30 days after its removal.`,
    },
    unused: {
      title: `No unused ${kind.noun}s`,
      body: `${kind.plural} set aside as unused (through the API) are kept here with their history; you can accept them again.`,
    },
  };
  const empty = filtered
    ? {
        title: `No ${kind.noun}s match these filters`,
        body: 'Change the search or the filters, or clear them.',
      }
    : (emptyText[status] ?? { title: 'Nothing here', body: '' });
  const clear = () => {
    setSearch('');
    setFieldValue('');
    setFilters(noFilters);
  };
  const n = chosen.length;
  const many = n === 1 ? `1 ${kind.noun}` : `${n} ${kind.noun}s`;

  return (
    <>
      {atLimit && status !== 'accepted' ? (
        <div style={{ marginBottom: 14 }}>
          <Alert kind="warn" title="Device limit reached">
            {limitExplanation(namespace.data)}
            {slots.deviceLimit.map((Note, i) => (
              <Note key={String(i)} />
            ))}
          </Alert>
        </div>
      ) : null}
      {action.error ? (
        <div style={{ marginBottom: 14 }}>
          <Alert>{action.error}</Alert>
        </div>
      ) : null}
      {bulkResult && bulkResult.failed.length > 0 ? (
        <div style={{ marginBottom: 14 }}>
          <Alert
            title={`${bulkResult.label}: ${bulkResult.done} done, ${bulkResult.failed.length} could not be changed`}
          >
            <ul style={{ margin: '6px 0 0', paddingLeft: 18 }}>
              {bulkResult.failed.map((f) => (
                <li key={f.uid}>
                  <strong>{f.name}</strong>: {f.message}
                </li>
              ))}
            </ul>
          </Alert>
        </div>
      ) : null}
      <Card>
        <div className="toolbar">
          <label className="sr-only" htmlFor="device-search">
            Search {kind.noun}s by name, tag or address
          </label>
          <input
            id="device-search"
            className="input"
            type="search"
            placeholder="Search name, tag or address"
            value={search}
            onChange={(e) => setSearch(e.target.value)}
          />
          <select
            className="input"
            style={{ width: 'auto' }}
            aria-label="Tag"
            value={filters.tag}
            onChange={(e) => setFilters({ ...filters, tag: e.target.value })}
          >
            <option value="">Any tag</option>
            {[...new Set([...(tagChoices.data ?? []), ...(filters.tag ? [filters.tag] : [])])].map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
          <select
            className="input"
            style={{ width: 'auto' }}
            aria-label="Operating system"
            value={filters.os}
            onChange={(e) => setFilters({ ...filters, os: e.target.value })}
          >
            <option value="">Any operating system</option>
            {byOsId(osChoices.data ?? []).map((o) => (
              <option key={o.id} value={o.id}>
                {o.pretty_name || o.id} ({o.count})
              </option>
            ))}
            {filters.os && !(osChoices.data ?? []).some((o) => o.id === filters.os) ? (
              <option value={filters.os}>{filters.os}</option>
            ) : null}
          </select>
          {status === 'accepted' ? (
            <select
              className="input"
              style={{ width: 'auto' }}
              aria-label="Online state"
              value={filters.online}
              onChange={(e) =>
                setFilters({ ...filters, online: readFilters(`?online=${e.target.value}`).online })
              }
            >
              <option value="">Online or offline</option>
              <option value="online">Online</option>
              <option value="offline">Offline</option>
            </select>
          ) : null}
          <select
            className="input"
            style={{ width: 'auto' }}
            aria-label="Custom field column"
            value={filters.field}
            onChange={(e) => {
              setFieldValue('');
              setFilters({ ...filters, field: e.target.value, value: '' });
            }}
          >
            <option value="">No custom field</option>
            {[
              ...new Set([
                ...(fieldChoices.data ?? []).map((f) => f.key),
                ...(filters.field ? [filters.field] : []),
              ]),
            ].map((key) => (
              <option key={key} value={key}>
                {key}
              </option>
            ))}
          </select>
          {filters.field ? (
            <input
              className="input"
              type="search"
              style={{ width: 'auto' }}
              aria-label={`${filters.field} contains`}
              placeholder={`${filters.field} contains`}
              value={fieldValue}
              onChange={(e) => setFieldValue(e.target.value)}
            />
          ) : null}
          {filtered || search ? (
            <Button size="sm" variant="ghost" onClick={clear}>
              Clear filters
            </Button>
          ) : null}
          {namespace.data ? (
            <span className="muted" style={{ marginLeft: 'auto', fontSize: 13 }}>
              {namespace.data.device_count ?? 0} of{' '}
              {namespace.data.max_devices > 0 ? namespace.data.max_devices : 'unlimited'} device slots in use
            </span>
          ) : null}
        </div>
        {n > 0 ? (
          <section className="toolbar" aria-label="Selected devices" aria-busy={bulkBusy || undefined}>
            <strong style={{ fontSize: 13 }}>{many} selected</strong>
            {status !== 'accepted' ? (
              <Button
                size="sm"
                variant="primary"
                {...acceptCan.gate}
                disabled={!acceptCan.allowed || bulkBusy || undefined}
                onClick={bulkAccept}
              >
                Accept selected
              </Button>
            ) : null}
            {status === 'pending' ? (
              <Button
                size="sm"
                {...rejectCan.gate}
                disabled={!rejectCan.allowed || bulkBusy || undefined}
                onClick={bulkReject}
              >
                Reject selected
              </Button>
            ) : null}
            <Button
              size="sm"
              {...tagCan.gate}
              disabled={!tagCan.allowed || bulkBusy || undefined}
              onClick={() => {
                setBulkTag('');
                setBulk('tag');
              }}
            >
              Add tag
            </Button>
            {status !== 'removed' ? (
              <Button
                size="sm"
                {...removeCan.gate}
                disabled={!removeCan.allowed || bulkBusy || undefined}
                onClick={() => setBulk('remove')}
              >
                Remove selected
              </Button>
            ) : null}
            <Button size="sm" variant="ghost" onClick={() => setSelected(new Set())}>
              Clear selection
            </Button>
          </section>
        ) : null}
        <DataTable
          label={`${views.find((v) => v.status === status)?.label ?? ''} ${kind.noun}s`}
          columns={columns}
          {...devicesTable}
          rowKey={(d) => d.uid}
          cards
          empty={
            <Empty
              title={empty.title}
              icon={kind === deviceKind ? icons.devices : icons.containers}
              action={
                filtered ? (
                  <Button size="sm" onClick={clear}>
                    Clear filters
                  </Button>
                ) : kind === deviceKind && status === 'accepted' && waiting === 0 ? (
                  <div style={{ textAlign: 'left', marginTop: 14, width: '100%', maxWidth: 720 }}>
                    <InstallCommands tenant={user.tenant} />
                  </div>
                ) : null
              }
            >
              {empty.body}
            </Empty>
          }
        />
      </Card>
      <DeviceDialogs
        dialog={dialog}
        kind={kind}
        onClose={() => setDialog(null)}
        onDone={() => {
          setDialog(null);
          devices.reload();
          onChanged();
        }}
      />
      {bulk === 'tag' ? (
        <Dialog
          open
          title={`Add a tag to ${many}`}
          description={`${kind.plural} that have the tag already keep it; a ${kind.noun} has at most 3 tags.`}
          onClose={() => setBulk(null)}
          submitLabel="Add tag"
          onSubmit={() => {
            if (bulkTagProblem) return;
            setBulk(null);
            void bulkAddTag(bulkTag.trim());
          }}
        >
          <TextField
            label="Tag"
            list="bulk-tag-choices"
            value={bulkTag}
            onChange={(e) => setBulkTag(e.target.value)}
            hint="3 to 255 characters; the namespace's tags are suggested."
            error={bulkTag !== '' ? bulkTagProblem : null}
            autoFocus
          />
          <datalist id="bulk-tag-choices">
            {(tagChoices.data ?? []).map((t) => (
              <option key={t} value={t} />
            ))}
          </datalist>
        </Dialog>
      ) : null}
      {bulk === 'remove' ? (
        <Dialog
          open
          title={`Remove ${many}?`}
          description={`The ${n === 1 ? kind.noun : `${n} ${kind.noun}s`} leave this namespace and their sessions end. An agent that keeps running asks to join again as pending.`}
          onClose={() => setBulk(null)}
          submitLabel={`Remove ${many}`}
          submitVariant="danger"
          onSubmit={() => {
            setBulk(null);
            void bulkRemove();
          }}
        />
      ) : null}
    </>
  );
}

/** How many devices of each tab's status the namespace has (the X-Total-Count of a one-row page). */
function useCounts(kind: DeviceKind) {
  const api = useApi();
  const user = useUser();
  return useResource(async () => {
    const totals = await Promise.all(
      views.map((v) => api.page<Device>(kind.calls.list, { query: { status: v.status, per_page: 1 } })),
    );
    return Object.fromEntries(views.map((v, i) => [v.status, totals[i]?.total ?? 0])) as Partial<
      Record<DeviceStatus, number>
    >;
  }, [api, kind, user.tenant]);
}

function ListPage({ kind, params }: { kind: DeviceKind; params: Record<string, string> }) {
  const status = (views.find((v) => v.status === params.status)?.status ?? 'accepted') as DeviceStatus;
  const location = useLocation();
  const navigate = useNavigate();
  const filters = readFilters(location.search);
  const setFilters = (next: Filters) =>
    navigate(`${location.pathname}${filterSearch(next)}`, { replace: true });
  const counts = useCounts(kind);
  return (
    <>
      <PageHeader
        title={kind.plural}
        description={
          kind === deviceKind
            ? 'Machines whose agent has registered with this namespace, wherever the agent runs (a host, a VM or a container).'
            : 'Containers that a container-engine connector exposes. An agent running inside a container is listed under Devices.'
        }
      />
      <nav className="tabs" aria-label={`${kind.plural} by status`}>
        {views.map((v) => (
          <Link
            key={v.status}
            to={`${v.status === 'accepted' ? kind.listPath : `${kind.listPath}/${v.status}`}${filterSearch(filters)}`}
            aria-current={v.status === status ? 'page' : undefined}
          >
            {v.label}
            {counts.data ? <span className="tab-count">{counts.data[v.status] ?? 0}</span> : null}
          </Link>
        ))}
      </nav>
      <DeviceList
        kind={kind}
        status={status}
        filters={filters}
        setFilters={setFilters}
        counts={counts.data}
        onChanged={counts.reload}
      />
    </>
  );
}

export function DevicesPage({ params }: { params: Record<string, string> }) {
  return <ListPage kind={deviceKind} params={params} />;
}

export function ContainersPage({ params }: { params: Record<string, string> }) {
  return <ListPage kind={containerKind} params={params} />;
}
