import { type FormEvent, useEffect, useState } from 'react';
import { sessionCalls } from '../shell/api/calls';
import { ApiError, listFields } from '../shell/api/errors';
import type { AuthenticatedUser } from '../shell/api/types';
import { useAction } from '../shell/resource';
import { Link, useNavigate, useSearchParam } from '../shell/router';
import { emailProblem, fieldRules, ruleProblem } from '../shell/rules';
import { useConsole } from '../shell/session';
import { Button, TextField } from '../shell/ui/controls';
import { Alert } from '../shell/ui/feedback';
import { AuthFrame } from './auth-frame';

/** First run: the server prints "<public url>/setup?sign=<signature>"; this screen creates the first user. */
export function Setup({ onDone }: { onDone: () => void }) {
  const { api, signIn, info } = useConsole();
  const sign = useSearchParam('sign');
  const navigate = useNavigate();
  const [form, setForm] = useState({ name: '', email: '', username: '', password: '', confirm: '' });
  const [invalid, setInvalid] = useState<string[]>([]);
  const [sending, setSending] = useState(false);
  const action = useAction();

  useEffect(() => {
    document.title = 'Set up · Gatehouse';
  }, []);

  if (info.setup) {
    return (
      <AuthFrame title="Gatehouse is set up" subtitle="The first account already exists.">
        <Link to="/" className="btn btn-primary btn-block">
          Go to sign in
        </Link>
      </AuthFrame>
    );
  }
  if (!sign) {
    return (
      <AuthFrame title="Welcome to Gatehouse" subtitle="Finish setting up this server.">
        <Alert kind="info" title="Open the setup link">
          When it starts for the first time, <code>gatehouse serve</code> prints a setup link ending in{' '}
          <code>/setup?sign=…</code>. Open that link to create the first account; it proves you run this
          server.
        </Alert>
      </AuthFrame>
    );
  }

  const set = (key: keyof typeof form) => (e: { target: { value: string } }) =>
    setForm((f) => ({ ...f, [key]: e.target.value }));
  const mismatch = form.confirm.length > 0 && form.confirm !== form.password;
  const problems = (complete: boolean) => ({
    name: ruleProblem(fieldRules.name, form.name, complete),
    email: emailProblem(form.email, complete),
    username: ruleProblem(fieldRules.username, form.username, complete),
    password: ruleProblem(fieldRules.password, form.password, complete),
    confirm: mismatch ? 'The passwords do not match.' : complete && !form.confirm ? 'Fill this in.' : null,
  });
  const shown = problems(sending);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setSending(true);
    if (Object.values(problems(true)).some(Boolean)) return;
    setInvalid([]);
    let user: AuthenticatedUser | null = null;
    await action.run(async () => {
      const { confirm: _confirm, ...body } = form;
      try {
        await api.call(sessionCalls.setup, { body, query: { sign }, context: 'Setup failed' });
      } catch (error) {
        if (error instanceof ApiError && (error.status === 400 || error.status === 409))
          setInvalid(error.fields);
        if (error instanceof ApiError && error.status === 401) {
          throw new Error(
            'This setup link is not valid. Copy the whole link the server printed and open it again.',
          );
        }
        throw error;
      }
      user = await api.call<AuthenticatedUser>(sessionCalls.login, {
        body: { username: form.username, password: form.password },
        context: 'Your account was created, but signing in failed',
      });
    });
    if (user) {
      signIn(user);
      onDone();
      navigate('/', { replace: true });
    }
  };

  const fieldError = (field: keyof ReturnType<typeof problems>) =>
    shown[field] ?? (invalid.includes(field) ? `Check the ${listFields([field])}.` : null);

  return (
    <AuthFrame
      title="Welcome to Gatehouse"
      subtitle="Create the first account. It owns a namespace named after the username."
    >
      <form className="form" onSubmit={submit} noValidate>
        {action.error ? <Alert>{action.error}</Alert> : null}
        <TextField
          label="Full name"
          value={form.name}
          onChange={set('name')}
          required
          autoComplete="name"
          error={fieldError('name')}
          autoFocus
        />
        <TextField
          label="Email"
          type="email"
          value={form.email}
          onChange={set('email')}
          required
          autoComplete="email"
          error={fieldError('email')}
        />
        <TextField
          label="Username"
          value={form.username}
          onChange={set('username')}
          required
          autoComplete="username"
          hint={fieldRules.username.hint}
          error={fieldError('username')}
        />
        <TextField
          label="Password"
          type="password"
          value={form.password}
          onChange={set('password')}
          required
          autoComplete="new-password"
          hint={fieldRules.password.hint}
          error={fieldError('password')}
        />
        <TextField
          label="Confirm password"
          type="password"
          value={form.confirm}
          onChange={set('confirm')}
          required
          autoComplete="new-password"
          error={fieldError('confirm')}
        />
        <Button type="submit" variant="primary" className="btn-block" busy={action.pending}>
          Create account
        </Button>
      </form>
    </AuthFrame>
  );
}
