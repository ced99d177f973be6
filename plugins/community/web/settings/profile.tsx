import {
  Alert,
  ApiError,
  type AuthenticatedUser,
  Button,
  Card,
  fieldRules,
  listFields,
  ruleProblem,
  TextField,
  useAction,
  useConsole,
  useToast,
  useUser,
} from '@gatehouse/console';
import { type FormEvent, useState } from 'react';
import { calls } from '../api';

export function ProfileTab() {
  const { api, replaceUser } = useConsole();
  const user = useUser();
  const toast = useToast();
  const [form, setForm] = useState({
    name: user.name ?? '',
    username: user.user ?? '',
    email: user.email ?? '',
    recovery_email: user.recovery_email ?? '',
  });
  const [taken, setTaken] = useState<string[]>([]);
  const action = useAction();
  const recoverySame = form.recovery_email && form.recovery_email.toLowerCase() === form.email.toLowerCase();

  const problems = {
    name: ruleProblem(fieldRules.name, form.name, true),
    username: ruleProblem(fieldRules.username, form.username, true),
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (recoverySame || problems.name || problems.username) return;
    setTaken([]);
    const changes: Record<string, string> = {};
    if (form.name !== user.name) changes.name = form.name;
    if (form.username !== user.user) changes.username = form.username;
    if (form.email !== user.email) changes.email = form.email;
    if (form.recovery_email && form.recovery_email !== (user.recovery_email ?? ''))
      changes.recovery_email = form.recovery_email;
    if (Object.keys(changes).length === 0) {
      toast('Nothing to save');
      return;
    }
    let fresh: Partial<AuthenticatedUser> | null = null;
    const ok = await action.run(async () => {
      try {
        // The answer is a new user record with a token that carries the changed username.
        fresh = await api.call<Partial<AuthenticatedUser> | null>(calls.updateUser, {
          body: changes,
          context: 'Could not save your profile',
        });
      } catch (error) {
        if (error instanceof ApiError && (error.status === 409 || error.status === 400))
          setTaken(error.fields);
        throw error;
      }
    });
    if (ok) {
      replaceUser({
        ...(fresh ?? {}),
        name: form.name,
        user: form.username,
        email: form.email,
        recovery_email: form.recovery_email || user.recovery_email,
      });
      toast('Profile saved');
    }
  };
  const fieldError = (f: 'name' | 'username' | 'email' | 'recovery_email') =>
    (f === 'name' || f === 'username' ? problems[f] : null) ??
    (taken.includes(f) ? `This ${listFields([f])} cannot be used.` : null);

  return (
    <Card title="Profile">
      <form className="card-body form" onSubmit={submit} style={{ maxWidth: 520 }}>
        {action.error ? <Alert>{action.error}</Alert> : null}
        <TextField
          label="Full name"
          value={form.name}
          onChange={(e) => setForm({ ...form, name: e.target.value })}
          hint={fieldRules.name.hint}
          required
          error={fieldError('name')}
        />
        <TextField
          label="Username"
          value={form.username}
          onChange={(e) => setForm({ ...form, username: e.target.value })}
          hint={fieldRules.username.hint}
          required
          error={fieldError('username')}
        />
        <TextField
          label="Email"
          type="email"
          value={form.email}
          onChange={(e) => setForm({ ...form, email: e.target.value })}
          required
          error={fieldError('email')}
        />
        <TextField
          label="Recovery email"
          type="email"
          value={form.recovery_email}
          onChange={(e) => setForm({ ...form, recovery_email: e.target.value })}
          hint="Needed to turn on two-step verification. It must differ from your email and cannot be cleared once set."
          error={
            recoverySame ? 'Use a different address from your main email.' : fieldError('recovery_email')
          }
        />
        <div>
          <Button type="submit" variant="primary" busy={action.pending}>
            Save profile
          </Button>
        </div>
      </form>
    </Card>
  );
}
