import {
  Alert,
  type AuthenticatedUser,
  Button,
  Card,
  Empty,
  ErrorState,
  formatDate,
  Loading,
  PageHeader,
  SelectField,
  sessionCalls,
  TextField,
  useAction,
  useApi,
  useConsole,
  useLocation,
  useNavigate,
  useResource,
  useToast,
  useUser,
} from '@gatehouse/console';
import { type FormEvent, useState } from 'react';
import type { InviteView as InvitationStatus } from '../invitations/schemas';
import { inviteLink } from './accounts';
import { calls } from './api';

/** The invitation link's page, signed in: what it is, and the button that accepts it. */
export function AcceptInvitePage() {
  const api = useApi();
  const user = useUser();
  const { replaceUser } = useConsole();
  const navigate = useNavigate();
  const { search } = useLocation();
  const link = inviteLink(new URLSearchParams(search));
  const status = useResource(
    () =>
      link
        ? api.call<InvitationStatus>(calls.inviteStatus, {
            params: { tenant: link.tenant, id: link.id },
            query: { sig: link.sig },
            context: 'Could not read the invitation',
          })
        : Promise.reject(new Error('This invitation link is incomplete: open it from the e-mail again.')),
    [api, search],
  );
  const action = useAction();
  const accept = async () => {
    if (!link) return;
    const ok = await action.run(async () => {
      await api.call(calls.acceptInvite, {
        params: { tenant: link.tenant },
        body: { sig: link.sig },
        context: 'Could not accept the invitation',
      });
      const next = await api.call<Partial<AuthenticatedUser>>(sessionCalls.switchNamespace, {
        params: { tenant: link.tenant },
      });
      replaceUser({ ...next, tenant: link.tenant });
    });
    if (ok) navigate('/');
  };
  const invite = status.data;
  return (
    <>
      <PageHeader title="Invitation" />
      {status.loading ? <Loading /> : null}
      {status.error ? (
        <ErrorState message="This invitation link is not valid. Ask the person who invited you for a new one." />
      ) : null}
      {invite ? (
        <Card title={`Join the namespace ${invite.namespace}`}>
          <div className="card-body stack">
            {action.error ? <Alert>{action.error}</Alert> : null}
            {invite.status === 'accepted' ? (
              <Alert kind="ok">This invitation was already accepted.</Alert>
            ) : invite.status === 'expired' ? (
              <Alert kind="warn">
                This invitation expired on {formatDate(invite.expires_at)}. Ask for a new one: inviting you
                again sends a new link.
              </Alert>
            ) : invite.email.toLowerCase() !== user.email.toLowerCase() ? (
              <Alert kind="warn">
                This invitation was sent to {invite.email}, and you are signed in as {user.email}. Sign out
                and sign in with that account to accept it.
              </Alert>
            ) : (
              <>
                <p>
                  You are invited as <strong>{invite.role}</strong>. The invitation is valid until{' '}
                  {formatDate(invite.expires_at)}.
                </p>
                <div className="row">
                  <Button variant="primary" onClick={accept} busy={action.pending}>
                    Accept invitation
                  </Button>
                </div>
              </>
            )}
          </div>
        </Card>
      ) : null}
    </>
  );
}

/**
 * In the namespace's Members screen, for those who manage members: invite by e-mail, and the invitations not accepted
 * yet, each to withdraw or send again.
 */
export function MemberInvitations() {
  const api = useApi();
  const user = useUser();
  const toast = useToast();
  const tenant = user.tenant;
  const list = useResource(
    () =>
      api.call<InvitationStatus[]>(calls.listInvites, {
        params: { tenant },
        context: 'Could not load the invitations',
      }),
    [api, tenant],
  );
  const [email, setEmail] = useState('');
  const [role, setRole] = useState('observer');
  const [link, setLink] = useState<string | null>(null);
  const action = useAction();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const ok = await action.run(async () => {
      const answer = await api.call<{ link: string }>(calls.invite, {
        params: { tenant },
        body: { email, role },
        context: 'Could not invite',
      });
      setLink(answer.link);
    });
    if (ok) {
      toast(`Invitation sent to ${email}`);
      setEmail('');
      list.reload();
    }
  };
  const withdraw = async (id: string) => {
    const ok = await action.run(() =>
      api.call(calls.withdrawInvite, {
        params: { tenant, id },
        context: 'Could not withdraw the invitation',
      }),
    );
    if (ok) list.reload();
  };
  // The API answers 409 to inviting an address whose link is still valid, and replaces an expired one: a link still
  // valid is withdrawn first, so the invitee gets a new one valid 7 days from now.
  const resend = async (invitation: InvitationStatus) => {
    const ok = await action.run(async () => {
      if (invitation.status !== 'expired')
        await api.call(calls.withdrawInvite, {
          params: { tenant, id: invitation.id },
          context: 'Could not send the invitation again',
        });
      const answer = await api.call<{ link: string }>(calls.invite, {
        params: { tenant },
        body: { email: invitation.email, role: invitation.role },
        context: 'Could not send the invitation again',
      });
      setLink(answer.link);
    });
    if (ok) {
      toast(`Invitation sent again to ${invitation.email}`);
      list.reload();
    }
  };
  if (!tenant) return <Empty title="No namespace">Create or switch to a namespace to invite people.</Empty>;
  return (
    <div className="stack">
      <Card title="Invite by e-mail">
        <form className="card-body form" onSubmit={submit} noValidate>
          {action.error ? <Alert>{action.error}</Alert> : null}
          <TextField
            label="E-mail"
            type="email"
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            required
          />
          <SelectField
            label="Role"
            value={role}
            onChange={(e) => setRole(e.target.value)}
            options={['observer', 'operator', 'administrator'].map((r) => ({ value: r, label: r }))}
          />
          <p className="muted">
            The invitee gets a link, valid for 7 days, and has no access until they accept. Someone without an
            account signs up through it.
          </p>
          <div className="row">
            <Button type="submit" variant="primary" busy={action.pending}>
              Send invitation
            </Button>
          </div>
          {link ? (
            <Alert kind="info" title="Invitation link">
              <code style={{ wordBreak: 'break-all' }}>{link}</code>
            </Alert>
          ) : null}
        </form>
      </Card>
      <Card title="Pending invitations">
        {list.loading ? <Loading /> : null}
        {list.error ? <ErrorState message={list.error} onRetry={list.reload} /> : null}
        {list.data && list.data.length === 0 ? <Empty title="No pending invitations" /> : null}
        {list.data && list.data.length > 0 ? (
          <table className="table" aria-label="Pending invitations">
            <thead>
              <tr>
                <th>E-mail</th>
                <th>Role</th>
                <th>Status</th>
                <th>Valid until</th>
                <th className="actions">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((i) => (
                <tr key={i.id}>
                  <td>{i.email}</td>
                  <td>{i.role}</td>
                  <td>{i.status === 'expired' ? 'expired: invite again to resend' : 'pending'}</td>
                  <td>{formatDate(i.expires_at)}</td>
                  <td className="actions">
                    <Button
                      size="sm"
                      variant="ghost"
                      onClick={() => resend(i)}
                      aria-label={`Resend the invitation to ${i.email}`}
                    >
                      Resend
                    </Button>
                    <Button
                      size="sm"
                      variant="ghost"
                      onClick={() => withdraw(i.id)}
                      aria-label={`Withdraw the invitation to ${i.email}`}
                    >
                      Withdraw
                    </Button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
      </Card>
    </div>
  );
}
