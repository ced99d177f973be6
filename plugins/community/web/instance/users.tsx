import {
  Button,
  Card,
  createColumnHelper,
  DataTable,
  Dialog,
  Empty,
  emailProblem,
  fieldRules,
  formatDate,
  icons,
  PageHeader,
  ruleProblem,
  Switch,
  TextField,
  useAction,
  useApi,
  useFormDialog,
  usePagedList,
  useToast,
  useUser,
} from '@gatehouse/console';
import { useState } from 'react';
import { calls } from '../api';
import type { AdminUser } from '../types';

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
              onClick={() => resetting.open({ password: '' }, u)}
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
    username: ruleProblem(fieldRules.username, f.username, true),
    email: emailProblem(f.email, true),
    password: passwordProblem(f.password),
    name: f.name === '' ? null : ruleProblem(fieldRules.name, f.name, true),
  });
  const passwordProblem = (password: string) => ruleProblem(fieldRules.password, password, true);
  const creating = useFormDialog({
    action,
    valid: (f) => !Object.values(problems(f)).some(Boolean),
    send: (f: typeof empty) =>
      api.call(calls.adminCreateUser, {
        body: {
          username: f.username.trim(),
          email: f.email.trim(),
          password: f.password,
          admin: f.admin,
          ...(f.name.trim() ? { name: f.name.trim() } : {}),
        },
        context: 'Could not create the user',
      }),
    done: (_answer, f) => {
      toast(`User ${f.username} created`);
      users.reload();
    },
  });
  const resetting = useFormDialog({
    action,
    valid: (d) => !passwordProblem(d.password),
    send: (d: { password: string }, u: AdminUser | null) =>
      api.call(calls.adminSetPassword, {
        params: { user: u?.id ?? '' },
        body: { password: d.password },
        context: 'Could not set the password',
      }),
    done: (_answer, _draft, u) => toast(`Password of ${u?.username ?? ''} changed`),
  });

  return (
    <>
      <PageHeader
        title="Users"
        description="Every account of this Gatehouse instance. A disabled account cannot sign in; its tokens and API keys stop working at once."
        actions={
          <Button variant="primary" onClick={() => creating.open(empty)}>
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
      <Dialog {...creating.dialog} title="Create a user" submitLabel="Create user">
        {creating.draft ? (
          <>
            <TextField
              label="Username"
              value={creating.draft.username}
              onChange={(e) => creating.change({ username: e.target.value })}
              error={creating.draft.username ? problems(creating.draft).username : null}
              autoComplete="off"
              autoFocus
              required
            />
            <TextField
              label="E-mail"
              type="email"
              value={creating.draft.email}
              onChange={(e) => creating.change({ email: e.target.value })}
              error={creating.draft.email ? problems(creating.draft).email : null}
              required
            />
            <TextField
              label="Name"
              value={creating.draft.name}
              onChange={(e) => creating.change({ name: e.target.value })}
              error={problems(creating.draft).name}
              hint="Optional; the username when left empty."
            />
            <TextField
              label="Password"
              type="password"
              value={creating.draft.password}
              onChange={(e) => creating.change({ password: e.target.value })}
              error={creating.draft.password ? problems(creating.draft).password : null}
              autoComplete="new-password"
              hint={`${fieldRules.password.hint} Tell the person; they can change it in Settings.`}
              required
            />
            <Switch
              label="Instance administrator"
              checked={creating.draft.admin}
              onChange={(admin) => creating.change({ admin })}
            />
          </>
        ) : null}
      </Dialog>
      <Dialog
        {...resetting.dialog}
        title={`Reset the password of ${resetting.subject?.username ?? ''}`}
        description="They are signed out everywhere; tell them the new password."
        submitLabel="Set password"
      >
        {resetting.draft ? (
          <TextField
            label="New password"
            type="password"
            value={resetting.draft.password}
            onChange={(e) => resetting.change({ password: e.target.value })}
            error={resetting.draft.password ? passwordProblem(resetting.draft.password) : null}
            autoComplete="new-password"
            autoFocus
            required
          />
        ) : null}
      </Dialog>
    </>
  );
}
