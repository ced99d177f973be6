import {
  Alert,
  ApiError,
  AuthFrame,
  Button,
  emailProblem,
  fieldRules,
  Link,
  matchPath,
  ruleProblem,
  Switch,
  TextField,
  useAction,
  useApi,
  useLocation,
  useNavigate,
  useResource,
  useSearchParam,
} from '@gatehouse/console';
import { type FormEvent, useEffect, useState } from 'react';
import type { InviteView as InvitationStatus } from '../invitations/schemas';
import { calls } from './api';

/** The query of an invitation link: `/accept-invite?tenant-id=&user-id=&sig=`. */
export function inviteLink(search: URLSearchParams) {
  const tenant = search.get('tenant-id');
  const id = search.get('user-id');
  const sig = search.get('sig');
  return tenant && id && sig ? { tenant, id, sig } : null;
}

function BackToSignIn() {
  return (
    <p className="muted" style={{ textAlign: 'center', marginTop: 16 }}>
      <Link to="/">Back to sign in</Link>
    </p>
  );
}

/** Sign-up (`POST /api/register`); with an invitation's `sig` the account joins that namespace at once. */
export function SignUpPage() {
  const api = useApi();
  const sig = useSearchParam('sig');
  const invitedEmail = useSearchParam('email');
  const namespace = useSearchParam('namespace');
  const [form, setForm] = useState({ name: '', email: invitedEmail ?? '', username: '', password: '' });
  const [marketing, setMarketing] = useState(false);
  const [done, setDone] = useState(false);
  const [sending, setSending] = useState(false);
  const action = useAction();
  const set = (key: keyof typeof form) => (e: { target: { value: string } }) =>
    setForm({ ...form, [key]: e.target.value });
  const problems = (complete: boolean) => ({
    name: ruleProblem(fieldRules.name, form.name, complete),
    email: emailProblem(form.email, complete),
    username: ruleProblem(fieldRules.username, form.username, complete),
    password: ruleProblem(fieldRules.registrationPassword, form.password, complete),
  });
  const shown = problems(sending);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setSending(true);
    if (Object.values(problems(true)).some(Boolean)) return;
    const ok = await action.run(() =>
      api.call(calls.register, {
        body: { ...form, email_marketing: marketing, ...(sig ? { sig } : {}) },
        context: 'Could not create the account',
      }),
    );
    if (ok) setDone(true);
  };

  if (done) {
    return (
      <AuthFrame title={sig ? 'Your account is ready' : 'Check your inbox'}>
        {sig ? (
          <Alert kind="ok">
            You joined {namespace ? `the namespace ${namespace}` : 'the namespace you were invited to'}. Sign
            in with your username and password.
          </Alert>
        ) : (
          <Alert kind="ok">
            We sent a link to {form.email}. Open it to confirm your address; then you can sign in.
          </Alert>
        )}
        <BackToSignIn />
      </AuthFrame>
    );
  }
  return (
    <AuthFrame
      title="Create your account"
      subtitle={namespace ? `Sign up to join the namespace ${namespace}.` : 'Free for up to 3 devices.'}
    >
      <form className="form" onSubmit={submit} noValidate>
        {action.error ? <Alert>{action.error}</Alert> : null}
        <TextField
          label="Name"
          value={form.name}
          onChange={set('name')}
          autoComplete="name"
          hint={fieldRules.name.hint}
          error={shown.name}
          required
        />
        <TextField
          label="E-mail"
          type="email"
          value={form.email}
          onChange={set('email')}
          autoComplete="email"
          readOnly={Boolean(sig && invitedEmail)}
          error={shown.email}
          required
        />
        <TextField
          label="Username"
          value={form.username}
          onChange={set('username')}
          autoComplete="username"
          hint={fieldRules.username.hint}
          error={shown.username}
          required
        />
        <TextField
          label="Password"
          type="password"
          value={form.password}
          onChange={set('password')}
          autoComplete="new-password"
          hint={fieldRules.registrationPassword.hint}
          error={shown.password}
          required
        />
        <Switch label="Send me product news by e-mail" checked={marketing} onChange={setMarketing} />
        <Button type="submit" variant="primary" className="btn-block" busy={action.pending}>
          Create account
        </Button>
      </form>
      <BackToSignIn />
    </AuthFrame>
  );
}

/** The mailed verification link: `/validation_account?email=&token=`. */
export function VerifyAccountPage() {
  const api = useApi();
  const email = useSearchParam('email') ?? '';
  const token = useSearchParam('token') ?? '';
  const result = useResource(
    () =>
      api.call(calls.validateAccount, {
        query: { email, token },
        context: 'Could not verify the address',
      }),
    [api, email, token],
  );
  return (
    <AuthFrame title="Confirm your e-mail address">
      {result.loading ? <p className="muted">Checking the link…</p> : null}
      {result.error ? (
        <>
          <Alert>
            This link is not valid any more: it works once, within 24 hours. Ask for a new one below.
          </Alert>
          <ResendForm initial={email} />
        </>
      ) : null}
      {!result.loading && !result.error ? (
        <Alert kind="ok">Your address {email} is confirmed. You can sign in now.</Alert>
      ) : null}
      <BackToSignIn />
    </AuthFrame>
  );
}

function ResendForm({ initial }: { initial: string }) {
  const api = useApi();
  const [username, setUsername] = useState(initial);
  const [sent, setSent] = useState(false);
  const action = useAction();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const ok = await action.run(() =>
      api.call(calls.resendVerification, { body: { username }, context: 'Could not send the message' }),
    );
    if (ok) setSent(true);
  };
  if (sent) {
    return (
      <Alert kind="ok">
        If an account whose address is not confirmed yet goes by {username}, a new link is on its way.
      </Alert>
    );
  }
  return (
    <form className="form" onSubmit={submit} noValidate>
      {action.error ? <Alert>{action.error}</Alert> : null}
      <TextField
        label="Username or e-mail"
        value={username}
        onChange={(e) => setUsername(e.target.value)}
        required
      />
      <Button type="submit" variant="primary" className="btn-block" busy={action.pending}>
        Send a new link
      </Button>
    </form>
  );
}

/** Asks for the verification link again. */
export function ResendVerificationPage() {
  return (
    <AuthFrame
      title="Confirm your e-mail address"
      subtitle="We send a new link to the address of the account."
    >
      <ResendForm initial="" />
      <BackToSignIn />
    </AuthFrame>
  );
}

/** Asks for a password recovery link (`POST /api/user/recover_password`). */
export function ForgotPasswordPage() {
  const api = useApi();
  const [username, setUsername] = useState('');
  const [sent, setSent] = useState(false);
  const action = useAction();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const ok = await action.run(() =>
      api.call(calls.recoverPassword, { body: { username }, context: 'Could not send the message' }),
    );
    if (ok) setSent(true);
  };
  return (
    <AuthFrame title="Forgot your password?" subtitle="We mail a link to choose a new one.">
      {sent ? (
        <Alert kind="ok">
          If an account goes by {username}, a message with a link is on its way. The link works once, within
          an hour.
        </Alert>
      ) : (
        <form className="form" onSubmit={submit} noValidate>
          {action.error ? <Alert>{action.error}</Alert> : null}
          <TextField
            label="Username or e-mail"
            value={username}
            onChange={(e) => setUsername(e.target.value)}
            autoComplete="username"
            required
          />
          <Button type="submit" variant="primary" className="btn-block" busy={action.pending}>
            Send the link
          </Button>
        </form>
      )}
      <BackToSignIn />
    </AuthFrame>
  );
}

/** The mailed recovery link: `/reset-password?uid=&token=`. */
export function ResetPasswordPage() {
  const api = useApi();
  const uid = useSearchParam('uid') ?? '';
  const token = useSearchParam('token') ?? '';
  const [password, setPassword] = useState('');
  const [done, setDone] = useState(false);
  const [sending, setSending] = useState(false);
  const action = useAction();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setSending(true);
    if (ruleProblem(fieldRules.password, password, true)) return;
    const ok = await action.run(async () => {
      try {
        await api.call(calls.updatePassword, { params: { uid }, body: { password, token } });
      } catch (error) {
        if (error instanceof ApiError && error.status === 400 && error.fields.includes('token'))
          throw new Error(
            'This link is not valid any more: it works once, within an hour. Ask for a new one.',
          );
        throw error;
      }
    });
    if (ok) setDone(true);
  };
  return (
    <AuthFrame title="Choose a new password">
      {done ? (
        <Alert kind="ok">
          Your password is changed; every earlier sign-in has ended. Sign in with the new one.
        </Alert>
      ) : (
        <form className="form" onSubmit={submit} noValidate>
          {action.error ? <Alert>{action.error}</Alert> : null}
          <TextField
            label="New password"
            type="password"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            autoComplete="new-password"
            hint={fieldRules.password.hint}
            error={ruleProblem(fieldRules.password, password, sending)}
            required
          />
          <Button type="submit" variant="primary" className="btn-block" busy={action.pending}>
            Change password
          </Button>
        </form>
      )}
      <BackToSignIn />
    </AuthFrame>
  );
}

/**
 * Under the sign-in form: sign-up, password recovery and a new verification link. Reached through an invitation
 * link (`/accept-invite`) by someone without an account, it leads on to sign-up with the invitation.
 */
export function SignInLinks() {
  const api = useApi();
  const navigate = useNavigate();
  const { pathname, search } = useLocation();
  const invite = matchPath('/accept-invite', pathname) ? inviteLink(new URLSearchParams(search)) : null;
  const [invited, setInvited] = useState<InvitationStatus | null>(null);
  const { tenant, id, sig } = invite ?? {};
  useEffect(() => {
    if (!tenant || !id || !sig) return;
    api
      .call<InvitationStatus>(calls.inviteStatus, {
        params: { tenant, id },
        query: { sig },
      })
      .then(
        (status) => {
          if (!status.account && status.status === 'pending') {
            const next = new URLSearchParams({
              sig,
              email: status.email,
              namespace: status.namespace,
            });
            navigate(`/signup?${next}`);
          } else setInvited(status);
        },
        () => setInvited(null),
      );
  }, [api, navigate, tenant, id, sig]);
  return (
    <div className="stack" style={{ marginTop: 12, textAlign: 'center' }}>
      {invited ? (
        <Alert kind="info">
          Sign in as {invited.email} to accept the invitation to the namespace {invited.namespace}.
        </Alert>
      ) : null}
      <p className="muted">
        No account yet? <Link to="/signup">Sign up</Link>
      </p>
      <p className="muted">
        <Link to="/forgot-password">Forgot your password?</Link> ·{' '}
        <Link to="/resend-verification">Confirmation e-mail not received?</Link>
      </p>
    </div>
  );
}
