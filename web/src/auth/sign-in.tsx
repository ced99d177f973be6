import { type FormEvent, useEffect, useState } from 'react';
import { sessionCalls } from '../shell/api/calls';
import { ApiError } from '../shell/api/errors';
import type { AuthenticatedUser } from '../shell/api/types';
import { useAction } from '../shell/resource';
import { fieldRules, ruleProblem } from '../shell/rules';
import { useConsole } from '../shell/session';
import { Button, TextField } from '../shell/ui/controls';
import { Alert } from '../shell/ui/feedback';
import { AuthFrame } from './auth-frame';

/** The lockout header holds the unix time the lockout ends (0 means none). */
export function lockoutMessage(header: string | null, now = Date.now()): string {
  const until = Number(header);
  if (!header || !Number.isFinite(until) || until <= 0) {
    return 'Too many failed sign-in attempts. Wait a few minutes before trying again.';
  }
  const minutes = Math.max(1, Math.round((until * 1000 - now) / 60000));
  const time = new Date(until * 1000).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  return `Too many failed sign-in attempts. Your account is locked until ${time} (about ${minutes} minute${minutes === 1 ? '' : 's'}). Try again then.`;
}

function LockoutAlert({ message }: { message: string }) {
  return (
    <Alert kind="warn" title="Account temporarily locked">
      {message}
    </Alert>
  );
}

export function SignIn() {
  const { api, signIn, endedReason, slots, info } = useConsole();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [mfaToken, setMfaToken] = useState<string | null>(null);
  const [code, setCode] = useState('');
  const [recovering, setRecovering] = useState(false);
  const [lockout, setLockout] = useState<string | null>(null);
  const action = useAction();

  useEffect(() => {
    document.title = 'Sign in · Gatehouse';
  }, []);

  const passwordProblem = ruleProblem(fieldRules.signInPassword, password);

  const submitPassword = async (event: FormEvent) => {
    event.preventDefault();
    if (passwordProblem) return;
    setLockout(null);
    let user: AuthenticatedUser | null = null;
    await action.run(async () => {
      try {
        user = await api.call<AuthenticatedUser>(sessionCalls.login, {
          body: { username, password },
          allowUnauthorized: true,
        });
      } catch (error) {
        if (error instanceof ApiError && error.status === 401) {
          const token = error.headers.get('X-MFA-Token');
          if (token) {
            setMfaToken(token);
            return;
          }
          throw new Error('The username or password is incorrect.');
        }
        if (error instanceof ApiError && error.status === 429) {
          setLockout(lockoutMessage(error.headers.get('X-Account-Lockout')));
          return;
        }
        // The account may not sign in (disabled, or its address not verified yet): the server says why.
        if (error instanceof ApiError && error.status === 403 && error.serverMessage) {
          throw new Error(`You cannot sign in: ${error.serverMessage}.`);
        }
        throw error;
      }
    });
    if (user) signIn(user);
  };

  const submitCode = async (event: FormEvent) => {
    event.preventDefault();
    let user: AuthenticatedUser | null = null;
    await action.run(async () => {
      try {
        user = recovering
          ? await api.call<AuthenticatedUser>(sessionCalls.mfaRecover, {
              body: { identifier: username, recovery_code: code.trim() },
              allowUnauthorized: true,
            })
          : await api.call<AuthenticatedUser>(sessionCalls.mfaAuth, {
              body: { token: mfaToken, code: code.replace(/\s/g, '') },
              allowUnauthorized: true,
            });
      } catch (error) {
        if (
          error instanceof ApiError &&
          (error.status === 401 || error.status === 403 || error.status === 400)
        ) {
          throw new Error(
            recovering
              ? 'That recovery code is not valid or was already used.'
              : 'That code is not valid. Check the time on your device and enter the current code.',
          );
        }
        if (error instanceof ApiError && error.status === 429) {
          setLockout(lockoutMessage(error.headers.get('X-Account-Lockout')));
          return;
        }
        throw error;
      }
    });
    if (user) signIn(user);
  };

  if (mfaToken) {
    return (
      <AuthFrame
        title="Two-step verification"
        subtitle={
          recovering
            ? 'Enter one of your recovery codes.'
            : 'Enter the 6-digit code from your authenticator app.'
        }
      >
        <form className="form" onSubmit={submitCode} noValidate>
          {lockout ? <LockoutAlert message={lockout} /> : null}
          {action.error ? <Alert>{action.error}</Alert> : null}
          {recovering ? (
            <TextField
              label="Recovery code"
              value={code}
              onChange={(e) => setCode(e.target.value)}
              autoComplete="off"
              required
              autoFocus
            />
          ) : (
            <TextField
              label="Verification code"
              value={code}
              onChange={(e) => setCode(e.target.value)}
              inputMode="numeric"
              autoComplete="one-time-code"
              pattern="[0-9 ]{6,7}"
              maxLength={7}
              required
              autoFocus
            />
          )}
          <Button type="submit" variant="primary" className="btn-block" busy={action.pending}>
            Verify
          </Button>
          <Button
            variant="ghost"
            onClick={() => {
              setRecovering(!recovering);
              setCode('');
              action.clearError();
            }}
          >
            {recovering ? 'Use the authenticator app instead' : 'Use a recovery code'}
          </Button>
          <Button
            variant="ghost"
            onClick={() => {
              setMfaToken(null);
              setCode('');
              setPassword('');
            }}
          >
            Back to sign in
          </Button>
        </form>
      </AuthFrame>
    );
  }

  return (
    <AuthFrame title="Sign in to Gatehouse" subtitle="Reach every device in your namespaces.">
      <form className="form" onSubmit={submitPassword}>
        {endedReason ? <Alert kind="info">{endedReason}</Alert> : null}
        {lockout ? <LockoutAlert message={lockout} /> : null}
        {action.error ? <Alert>{action.error}</Alert> : null}
        {info.authentication.local ? (
          <>
            <TextField
              label="Username or email"
              value={username}
              onChange={(e) => setUsername(e.target.value)}
              autoComplete="username"
              required
              autoFocus
            />
            <TextField
              label="Password"
              type="password"
              value={password}
              onChange={(e) => setPassword(e.target.value)}
              autoComplete="current-password"
              error={passwordProblem}
              required
            />
            <Button type="submit" variant="primary" className="btn-block" busy={action.pending}>
              Sign in
            </Button>
          </>
        ) : null}
        {slots.signIn.map((Extra, index) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: the list of sign-in extras is fixed after boot
          <Extra key={index} info={info} />
        ))}
      </form>
    </AuthFrame>
  );
}
