import {
  Button,
  Card,
  createColumnHelper,
  DataTable,
  Dialog,
  Empty,
  formatDate,
  icons,
  PageHeader,
  Switch,
  TextField,
  useAction,
  useApi,
  usePagedList,
  useToast,
  useUser,
} from '@gatehouse/console';
import { useState } from 'react';
import { calls } from '../api';
import type { AdminUser } from './types';

const empty = { name: '', username: '', email: '', password: '', admin: false };

/** Instance, Users: every account of the instance; create, reset a password, disable, grant administration. */
export function InstanceUsersPage() {
  const api = useApi();
  const me = useUser();
  const toast = useToast();
  const [search, setSearch] = useState('');
  const {
    query,
    setQuery,
    list: users,
    table: usersTable,
  } = usePagedList(
    (query) =>
      api.page<AdminUser>(calls.adminListUsers, {
        query: { page: query.page, per_page: query.perPage, ...(search ? { search } : {}) },
      }),
    [api, search],
  );
  const [form, setForm] = useState<typeof empty | null>(null);
  const [resetting, setResetting] = useState<{ user: AdminUser; password: string } | null>(null);
  const action = useAction();

  const update = async (u: AdminUser, body: { admin?: boolean; disabled?: boolean }, done: string) => {
    const ok = await action.run(() =>
      api.call(calls.adminUpdateUser, {
        params: { user: u.id },
        body,
        context: `Could not change ${u.username}`,
      }),
    );
    if (ok) {
      toast(done);
      users.reload();
    } else if (action.error) toast(action.error, 'error');
  };

  const column = createColumnHelper<AdminUser>();
  // Built on every render: the row actions use the latest state.
  const columns = [
    column.accessor('username', {
      header: 'User',
      enableSorting: false,
      cell: (ctx) => (
        <div>
          <strong>{ctx.getValue()}</strong>
          <div className="muted" style={{ fontSize: 13 }}>
            {ctx.row.original.email}
          </div>
        </div>
      ),
    }),
    column.display({
      id: 'status',
      header: 'Status',
      cell: (ctx) => (
        <div className="row" style={{ gap: 4 }}>
          {ctx.row.original.admin ? <span className="badge">Administrator</span> : null}
          {ctx.row.original.disabled ? (
            <span className="badge badge-danger">Disabled</span>
          ) : (
            <span className="badge badge-ok">Active</span>
          )}
        </div>
      ),
    }),
    column.accessor('namespaces', { header: 'Namespaces', enableSorting: false }),
    column.accessor('last_login', {
      header: 'Last sign-in',
      enableSorting: false,
      cell: (ctx) => (ctx.getValue() ? formatDate(ctx.getValue()) : 'Never'),
    }),
    column.display({
      id: 'actions',
      header: () => <span className="sr-only">Actions</span>,
      cell: (ctx) => {
        const u = ctx.row.original;
        const self = u.id === me.id;
        return (
          <div className="row" style={{ justifyContent: 'flex-end', gap: 6 }}>
            <Button
              size="sm"
              variant="ghost"
              aria-label={`Reset password for ${u.username}`}
              onClick={() => {
                action.clearError();
                setResetting({ user: u, password: '' });
              }}
            >
              Reset password
            </Button>
            {self ? null : (
              <>
                <Button
                  size="sm"
                  variant="ghost"
                  aria-label={`${u.admin ? 'Revoke admin' : 'Make admin'} for ${u.username}`}
                  onClick={() =>
                    update(
                      u,
                      { admin: !u.admin },
                      u.admin
                        ? `${u.username} is no longer an administrator`
                        : `${u.username} is an administrator`,
                    )
                  }
                >
                  {u.admin ? 'Revoke admin' : 'Make admin'}
                </Button>
                <Button
                  size="sm"
                  variant="ghost"
                  aria-label={`${u.disabled ? 'Enable' : 'Disable'} ${u.username}`}
                  onClick={() =>
                    update(
                      u,
                      { disabled: !u.disabled },
                      u.disabled ? `${u.username} is enabled` : `${u.username} is disabled`,
                    )
                  }
                >
                  {u.disabled ? 'Enable' : 'Disable'}
                </Button>
              </>
            )}
          </div>
        );
      },
    }),
  ];

  const problems = (f: typeof empty) => ({
    username: /^[A-Za-z0-9_.@-]{3,30}$/.test(f.username) ? null : 'Use 3 to 30 letters, digits, - _ . or @.',
    email: /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(f.email) ? null : 'Enter an e-mail address.',
    password: f.password.length >= 5 && f.password.length <= 30 ? null : 'Use 5 to 30 characters.',
    name: f.name === '' || (f.name.length >= 3 && f.name.length <= 20) ? null : 'Use 3 to 20 characters.',
  });

  return (
    <>
      <PageHeader
        title="Users"
        description="Every account of this Gatehouse instance. A disabled account cannot sign in; its tokens and API keys stop working at once."
        actions={
          <Button
            variant="primary"
            onClick={() => {
              action.clearError();
              setForm(empty);
            }}
          >
            {icons.plus} Create user
          </Button>
        }
      />
      <Card>
        <div style={{ maxWidth: 360, marginBottom: 12 }}>
          <TextField
            label="Search users"
            type="search"
            value={search}
            onChange={(e) => {
              setSearch(e.target.value);
              setQuery({ ...query, page: 1 });
            }}
            hint="Part of a username or e-mail."
          />
        </div>
        <DataTable
          label="Users"
          columns={columns}
          {...usersTable}
          rowKey={(u) => u.id}
          empty={
            <Empty title="No users match" icon={icons.users}>
              Try another search.
            </Empty>
          }
        />
      </Card>
      <Dialog
        open={Boolean(form)}
        title="Create a user"
        onClose={() => setForm(null)}
        submitLabel="Create user"
        busy={action.pending}
        error={action.error}
        onSubmit={async () => {
          if (!form || Object.values(problems(form)).some(Boolean)) return;
          const ok = await action.run(() =>
            api.call(calls.adminCreateUser, {
              body: {
                username: form.username.trim(),
                email: form.email.trim(),
                password: form.password,
                admin: form.admin,
                ...(form.name.trim() ? { name: form.name.trim() } : {}),
              },
              context: 'Could not create the user',
            }),
          );
          if (ok) {
            toast(`User ${form.username} created`);
            setForm(null);
            users.reload();
          }
        }}
      >
        {form ? (
          <>
            <TextField
              label="Username"
              value={form.username}
              onChange={(e) => setForm({ ...form, username: e.target.value })}
              error={form.username ? problems(form).username : null}
              autoComplete="off"
              autoFocus
              required
            />
            <TextField
              label="E-mail"
              type="email"
              value={form.email}
              onChange={(e) => setForm({ ...form, email: e.target.value })}
              error={form.email ? problems(form).email : null}
              required
            />
            <TextField
              label="Name"
              value={form.name}
              onChange={(e) => setForm({ ...form, name: e.target.value })}
              error={problems(form).name}
              hint="Optional; the username when left empty."
            />
            <TextField
              label="Password"
              type="password"
              value={form.password}
              onChange={(e) => setForm({ ...form, password: e.target.value })}
              error={form.password ? problems(form).password : null}
              autoComplete="new-password"
              hint="5 to 30 characters. Tell the person; they can change it in Settings."
              required
            />
            <Switch
              label="Instance administrator"
              checked={form.admin}
              onChange={(admin) => setForm({ ...form, admin })}
            />
          </>
        ) : null}
      </Dialog>
      <Dialog
        open={Boolean(resetting)}
        title={`Reset the password of ${resetting?.user.username ?? ''}`}
        description="They are signed out everywhere; tell them the new password."
        onClose={() => setResetting(null)}
        submitLabel="Set password"
        busy={action.pending}
        error={action.error}
        onSubmit={async () => {
          if (!resetting || resetting.password.length < 5 || resetting.password.length > 30) return;
          const ok = await action.run(() =>
            api.call(calls.adminSetPassword, {
              params: { user: resetting.user.id },
              body: { password: resetting.password },
              context: 'Could not set the password',
            }),
          );
          if (ok) {
            toast(`Password of ${resetting.user.username} changed`);
            setResetting(null);
          }
        }}
      >
        {resetting ? (
          <TextField
            label="New password"
            type="password"
            value={resetting.password}
            onChange={(e) => setResetting({ ...resetting, password: e.target.value })}
            error={
              resetting.password && (resetting.password.length < 5 || resetting.password.length > 30)
                ? 'Use 5 to 30 characters.'
                : null
            }
            autoComplete="new-password"
            autoFocus
            required
          />
        ) : null}
      </Dialog>
    </>
  );
}
