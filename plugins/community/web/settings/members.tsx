import {
  Alert,
  ApiError,
  Button,
  Card,
  ConfirmDialog,
  Dialog,
  Empty,
  ErrorState,
  formatDate,
  icons,
  Loading,
  type Role,
  ScrollFrame,
  SelectField,
  TextField,
  useAction,
  useCan,
  useConsole,
  useResource,
  useToast,
  useUser,
} from '@gatehouse/console';
import { useState } from 'react';
import { calls } from '../api';
import type { Member, Namespace } from '../types';
import { grantableRoles, roleLabels } from './roles';
import { RolesCard } from './roles-card';

/** What a person adding an unknown e-mail address needs to know (community adds existing accounts only). */
export function accountNeeded(email: string): string {
  return (
    `No Gatehouse account uses ${email}. The person needs an account first: an instance administrator ` +
    `creates it on the server with "npx gatehouse user create --username <username> --email ${email} ` +
    '--password <password>". Then add them here.'
  );
}

export function MembersTab() {
  const { api, slots } = useConsole();
  const user = useUser();
  const toast = useToast();
  const namespace = useResource(
    () =>
      api.call<Namespace>(calls.getNamespace, {
        params: { tenant: user.tenant },
        context: 'Could not load the members',
      }),
    [api, user.tenant],
  );
  const [adding, setAdding] = useState(false);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('observer');
  const [removing, setRemoving] = useState<Member | null>(null);
  const action = useAction();
  const roles = grantableRoles(user.role);
  const can = useCan();
  const mayAdd = can(calls.addMember, 'add members');
  const canChangeRole = can(calls.updateMember).allowed;
  const canRemove = can(calls.removeMember).allowed;

  if (namespace.error) return <ErrorState message={namespace.error} onRetry={namespace.reload} />;
  if (!namespace.data) return <Loading />;
  const ns = namespace.data;
  const members = ns.members ?? [];

  const changeRole = async (member: Member, next: Role) => {
    const ok = await action.run(() =>
      api.call(calls.updateMember, {
        params: { tenant: ns.tenant_id, uid: member.id },
        body: { role: next },
        context: 'Could not change the role',
      }),
    );
    if (ok) {
      toast(`Role changed to ${roleLabels[next]}`);
      namespace.reload();
    }
  };

  return (
    <div className="stack">
      {action.error && !adding && !removing ? <Alert>{action.error}</Alert> : null}
      <Card
        title="Members"
        actions={
          <Button
            variant="primary"
            size="sm"
            {...mayAdd.gate}
            onClick={() => {
              action.clearError();
              setEmail('');
              setAdding(true);
            }}
          >
            {icons.plus} Add member
          </Button>
        }
      >
        {members.length === 0 ? (
          <Empty title="No members">Add people by the email address of their Gatehouse account.</Empty>
        ) : (
          <ScrollFrame label="Members">
            <table className="table" aria-label="Members">
              <thead>
                <tr>
                  <th>Member</th>
                  <th>Role</th>
                  <th>Status</th>
                  <th>Added</th>
                  <th className="actions">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {members.map((m) => {
                  const who = m.email || m.username || m.id;
                  const isOwner = m.role === 'owner';
                  const isMe = m.id === user.id;
                  return (
                    <tr key={m.id}>
                      <td>
                        {who} {isMe ? <span className="badge">You</span> : null}
                      </td>
                      <td>
                        {canChangeRole && !isOwner && !isMe ? (
                          <>
                            <label className="sr-only" htmlFor={`role-${m.id}`}>
                              Role of {who}
                            </label>
                            <select
                              id={`role-${m.id}`}
                              className="input"
                              style={{ width: 160, height: 30 }}
                              value={m.role}
                              onChange={(e) => changeRole(m, e.target.value as Role)}
                              disabled={action.pending}
                            >
                              {roles.map((r) => (
                                <option key={r} value={r}>
                                  {roleLabels[r]}
                                </option>
                              ))}
                              {roles.includes(m.role) ? null : (
                                <option value={m.role}>{roleLabels[m.role]}</option>
                              )}
                            </select>
                          </>
                        ) : (
                          (roleLabels[m.role] ?? m.role)
                        )}
                      </td>
                      <td>
                        {m.status === 'pending' ? (
                          <span className="badge badge-warn">Invited</span>
                        ) : (
                          <span className="badge badge-ok">Active</span>
                        )}
                      </td>
                      <td>{formatDate(m.added_at)}</td>
                      <td className="actions">
                        {canRemove && !isOwner && !isMe ? (
                          <Button
                            size="sm"
                            variant="ghost"
                            onClick={() => {
                              action.clearError();
                              setRemoving(m);
                            }}
                            aria-label={`Remove ${who}`}
                          >
                            Remove
                          </Button>
                        ) : null}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </ScrollFrame>
        )}
      </Card>
      {mayAdd.allowed ? slots.members.map((Extra, i) => <Extra key={String(i)} />) : null}
      <RolesCard />
      <Dialog
        open={adding}
        title="Add a member"
        description="The person needs a Gatehouse account with this email address."
        onClose={() => setAdding(false)}
        submitLabel="Add member"
        busy={action.pending}
        error={action.error}
        onSubmit={async () => {
          const ok = await action.run(async () => {
            try {
              await api.call(calls.addMember, {
                params: { tenant: ns.tenant_id },
                body: { email: email.trim(), role },
                context: 'Could not add the member',
              });
            } catch (error) {
              // An unknown address: say what to do, not "it no longer exists".
              if (error instanceof ApiError && error.status === 404)
                throw new Error(accountNeeded(email.trim()));
              throw error;
            }
          });
          if (ok) {
            toast(`${email.trim()} added`);
            setAdding(false);
            namespace.reload();
          }
        }}
      >
        <TextField
          label="Email"
          type="email"
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          required
          autoFocus
        />
        <SelectField
          label="Role"
          value={role}
          onChange={(e) => setRole(e.target.value as Role)}
          options={roles.map((r) => ({ value: r, label: roleLabels[r] }))}
        />
      </Dialog>
      <ConfirmDialog
        subject={removing}
        title="Remove this member?"
        description={(m) =>
          `${m.email || m.username || 'They'} will lose access to this namespace and its devices.`
        }
        confirmLabel="Remove"
        action={action}
        onConfirm={(m) =>
          api.call(calls.removeMember, {
            params: { tenant: ns.tenant_id, uid: m.id },
            context: 'Could not remove the member',
          })
        }
        onDone={() => {
          toast('Member removed');
          namespace.reload();
        }}
        onClose={() => setRemoving(null)}
      />
    </div>
  );
}
