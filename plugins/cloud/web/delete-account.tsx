import {
  Alert,
  ApiError,
  Button,
  Card,
  Dialog,
  ErrorState,
  Loading,
  TextField,
  useAction,
  useConsole,
  useResource,
} from '@gatehouse/console';
import { useState } from 'react';
import type { DeletionPreview } from '../accounts/schemas';
import { calls } from './api';

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** Subscription statuses under which the provider still bills the namespace (a deletion cancels them). */
const billed = new Set(['active', 'trialing', 'past_due']);

/**
 * Account settings, Delete account: says what goes with the account before anything happens (the namespaces it
 * owns with their devices and members, a running subscription, the memberships that end), then asks for the
 * password (and a current code when two-step verification is on) and deletes exactly the namespaces it showed.
 */
export function DeleteAccountTab() {
  const { api, signOut } = useConsole();
  const preview = useResource(
    () =>
      api.call<DeletionPreview>(calls.deletionPreview, { context: 'Could not load what would be deleted' }),
    [api],
  );
  const [open, setOpen] = useState(false);
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const action = useAction();

  if (preview.error) return <ErrorState message={preview.error} onRetry={preview.reload} />;
  const data = preview.data;
  if (!data) return <Loading />;

  const remove = async () => {
    const ok = await action.run(async () => {
      try {
        await api.call(calls.deleteAccount, {
          body: {
            namespaces: data.namespaces.map((n) => n.tenant_id),
            ...(data.confirm.password ? { password } : {}),
            ...(data.confirm.code ? { code } : {}),
          },
          context: 'Could not delete the account',
        });
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        if (error.status === 403 && data.confirm.password) throw new Error('The password is wrong.');
        if (error.status === 409 && error.fields.includes('namespaces')) {
          setOpen(false);
          preview.reload();
          throw new Error('The namespaces you own changed meanwhile: check the list again.');
        }
        if (error.status === 400 && error.fields.includes('code'))
          throw new Error('The code is not valid: enter the current code of your authenticator app.');
        throw error;
      }
    });
    if (ok) await signOut('Your account was deleted.');
  };

  return (
    <Card title="Delete your account">
      <div className="card-body stack" style={{ maxWidth: 640 }}>
        {action.error && !open ? <Alert>{action.error}</Alert> : null}
        <p>Deleting your account cannot be undone. With it go:</p>
        {data.namespaces.length === 0 ? (
          <p className="muted">You own no namespace.</p>
        ) : (
          <ul aria-label="Namespaces deleted with the account">
            {data.namespaces.map((n) => (
              <li key={n.tenant_id}>
                The namespace <b>{n.name}</b>, with {plural(n.devices, 'device', 'devices')} and all its
                sessions, keys and rules;{' '}
                {n.members > 0
                  ? `${plural(n.members, 'other member loses', 'other members lose')} access`
                  : 'no other member has access'}
                {billed.has(n.subscription) ? '; its subscription is canceled' : ''}.
              </li>
            ))}
          </ul>
        )}
        {data.memberships.length > 0 ? (
          <ul aria-label="Memberships that end">
            {data.memberships.map((m) => (
              <li key={m.tenant_id}>
                Your membership of <b>{m.name}</b> ({m.role}); the namespace stays.
              </li>
            ))}
          </ul>
        ) : null}
        <div>
          <Button variant="danger" onClick={() => setOpen(true)}>
            Delete account…
          </Button>
        </div>
      </div>
      <Dialog
        open={open}
        title="Delete your account?"
        description={
          data.confirm.password
            ? 'Confirm with your password: it is the last step.'
            : 'You signed in with single sign-on a moment ago, which confirms it is you.'
        }
        onClose={() => {
          setOpen(false);
          action.clearError();
        }}
        onSubmit={remove}
        submitLabel="Delete my account"
        submitVariant="danger"
        busy={action.pending}
        error={action.error}
      >
        {data.confirm.password ? (
          <TextField
            label="Password"
            type="password"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            autoComplete="current-password"
            hint="Signed in with single sign-on? Sign in with it again, then delete within 5 minutes."
            required
          />
        ) : null}
        {data.confirm.code ? (
          <TextField
            label="Verification code"
            value={code}
            onChange={(e) => setCode(e.target.value)}
            inputMode="numeric"
            autoComplete="one-time-code"
            hint="The current code of your authenticator app."
            required
          />
        ) : null}
      </Dialog>
    </Card>
  );
}
