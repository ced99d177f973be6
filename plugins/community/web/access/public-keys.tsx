import {
  Alert,
  Button,
  Card,
  ConfirmDialog,
  createColumnHelper,
  DataTable,
  Dialog,
  Empty,
  formatDate,
  icons,
  PageHeader,
  TextArea,
  TextField,
  useApi,
  useCan,
  useFormDialog,
  usePagedList,
  useToast,
  useUser,
} from '@gatehouse/console';
import { useMemo, useState } from 'react';
import { calls } from '../api';
import type { PublicKey } from '../types';
import {
  describeFilter,
  draftFromFilter,
  emptyFilter,
  type FilterDraft,
  FilterFields,
  filterFromDraft,
  filterProblem,
} from './filter-fields';
import { useSha256 } from './use-sha256';

const column = createColumnHelper<PublicKey>();

const keyLine =
  /^(ssh-(ed25519|rsa|dss)|ecdsa-sha2-nistp(256|384|521)|sk-(ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com)\s+[A-Za-z0-9+/=]+/;

/** The API takes the whole authorized_keys line, base64-encoded (data is base64). */
export function encodeKeyData(line: string): string {
  return btoa(line.trim());
}

/** SHA256 first, as `ssh-keygen -l` prints it, then the MD5 fingerprint the API names keys by. */
function Fingerprints({ md5, data }: { md5: string; data: string }) {
  const sha256 = useSha256(data);
  return (
    <div className="stack" style={{ gap: 2 }}>
      {sha256 ? <code className="fingerprint">{sha256}</code> : null}
      <code className="fingerprint muted">MD5:{md5}</code>
    </div>
  );
}

interface Draft {
  name: string;
  data: string;
  username: string;
  filter: FilterDraft;
}

const blank: Draft = { name: '', data: '', username: '.*', filter: emptyFilter };

export function PublicKeysPage() {
  const api = useApi();
  const user = useUser();
  const toast = useToast();
  const can = useCan();
  const { list: keys, table: keysTable } = usePagedList(
    (query) =>
      api.page<PublicKey>(calls.listPublicKeys, { query: { page: query.page, per_page: query.perPage } }),
    [api, user.tenant],
  );
  const [removing, setRemoving] = useState<PublicKey | null>(null);
  const dataProblem = (d: Draft, key: PublicKey | null) =>
    !key && !keyLine.test(d.data.trim())
      ? 'Paste a public key line such as “ssh-ed25519 AAAA… you@laptop”.'
      : null;
  const nameProblem = (d: Draft) =>
    d.name.trim().length < 3 ? 'Give the key a name of at least 3 characters.' : null;
  const form = useFormDialog({
    valid: (d, key) => !dataProblem(d, key) && !nameProblem(d) && !filterProblem(d.filter),
    send: (d: Draft, key: PublicKey | null) => {
      const body = {
        name: d.name.trim(),
        username: d.username.trim() || '.*',
        filter: filterFromDraft(d.filter),
      };
      return key
        ? api.call(calls.updatePublicKey, {
            params: { fingerprint: key.fingerprint },
            body,
            context: 'Could not save the key',
          })
        : api.call(calls.createPublicKey, {
            body: { ...body, data: encodeKeyData(d.data) },
            context: 'Could not add the key',
          });
    },
    done: (_answer, _draft, key) => {
      toast(key ? 'Public key saved' : 'Public key added');
      keys.reload();
    },
  });
  const action = form.action;
  const open = (key: PublicKey | null) =>
    form.open(
      key ? { name: key.name, data: '', username: key.username, filter: draftFromFilter(key.filter) } : blank,
      key,
    );

  const columns = useMemo(
    () => [
      column.accessor('name', { header: 'Name', cell: (ctx) => <strong>{ctx.getValue()}</strong> }),
      column.accessor('fingerprint', {
        header: 'Fingerprint',
        cell: (ctx) => <Fingerprints md5={ctx.getValue()} data={ctx.row.original.data} />,
      }),
      column.accessor('username', {
        header: 'Device users',
        cell: (ctx) =>
          ctx.getValue() === '.*' ? <span className="muted">Any user</span> : <code>{ctx.getValue()}</code>,
      }),
      column.accessor('filter', { header: 'Devices', cell: (ctx) => describeFilter(ctx.getValue()) }),
      column.accessor('created_at', { header: 'Added', cell: (ctx) => formatDate(ctx.getValue()) }),
      column.display({
        id: 'actions',
        header: () => <span className="sr-only">Actions</span>,
        cell: (ctx) => (
          <div className="row" style={{ justifyContent: 'flex-end', gap: 6, flexWrap: 'nowrap' }}>
            <Button
              size="sm"
              variant="ghost"
              {...can(calls.updatePublicKey, 'edit public keys').gate}
              onClick={() => open(ctx.row.original)}
              aria-label={`Edit ${ctx.row.original.name}`}
            >
              Edit
            </Button>
            <Button
              size="sm"
              variant="ghost"
              {...can(calls.deletePublicKey, 'delete public keys').gate}
              onClick={() => setRemoving(ctx.row.original)}
              aria-label={`Delete ${ctx.row.original.name}`}
            >
              Delete
            </Button>
          </div>
        ),
      }),
    ],
    [can],
  );

  const draft = form.draft;

  return (
    <>
      <PageHeader
        title="Public keys"
        description="Keys that may sign in to devices in this namespace without a password."
        actions={
          <Button
            variant="primary"
            {...can(calls.createPublicKey, 'add public keys').gate}
            onClick={() => open(null)}
          >
            {icons.plus} Add public key
          </Button>
        }
      />
      <Card>
        <DataTable
          label="Public keys"
          columns={columns}
          {...keysTable}
          rowKey={(k) => k.fingerprint}
          empty={
            <Empty
              title="No public keys"
              icon={icons.key}
              action={
                <Button {...can(calls.createPublicKey, 'add public keys').gate} onClick={() => open(null)}>
                  Add public key
                </Button>
              }
            >
              Add a key so its holder can use ssh without typing a device password.
            </Empty>
          }
        />
      </Card>
      <Dialog
        {...form.dialog}
        title={form.subject ? `Edit ${form.subject.name}` : 'Add a public key'}
        submitLabel={form.subject ? 'Save' : 'Add key'}
      >
        {draft ? (
          <>
            <TextField
              label="Name"
              value={draft.name}
              onChange={(e) => form.change({ name: e.target.value })}
              error={form.touched ? nameProblem(draft) : null}
              autoFocus
              required
            />
            {form.subject ? null : (
              <TextArea
                label="Public key"
                value={draft.data}
                onChange={(e) => form.change({ data: e.target.value })}
                placeholder="ssh-ed25519 AAAAC3Nza… you@laptop"
                hint="The contents of your .pub file."
                error={form.touched ? dataProblem(draft, form.subject) : null}
                required
              />
            )}
            <TextField
              label="Device users"
              value={draft.username}
              onChange={(e) => form.change({ username: e.target.value })}
              hint="A regular expression for the device accounts this key may sign in as; .* allows any."
            />
            <FilterFields
              draft={draft.filter}
              onChange={(filter) => form.change({ filter })}
              showErrors={form.touched}
            />
          </>
        ) : null}
      </Dialog>
      <ConfirmDialog
        subject={removing}
        title={(key) => `Delete ${key.name}?`}
        description="Anyone using this key will need a password to sign in to devices."
        action={action}
        onConfirm={(key) =>
          api.call(calls.deletePublicKey, {
            params: { fingerprint: key.fingerprint },
            context: 'Could not delete the key',
          })
        }
        onDone={() => {
          toast('Public key deleted');
          keys.reload();
        }}
        onClose={() => setRemoving(null)}
      />
      {keys.data && action.error && !form.draft && !removing ? <Alert>{action.error}</Alert> : null}
    </>
  );
}
