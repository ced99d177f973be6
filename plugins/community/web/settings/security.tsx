import {
  Alert,
  ApiError,
  Button,
  Card,
  CopyField,
  Dialog,
  fieldRules,
  Link,
  ruleProblem,
  TextField,
  useAction,
  useConsole,
  useToast,
  useUser,
} from '@gatehouse/console';
import { type FormEvent, useMemo, useState } from 'react';
import { encode } from 'uqr';
import { calls } from '../api';
import type { MfaSecret } from '../types';

/** Draws the otpauth:// link as an SVG QR code, one path for all dark modules. */
export function QrCode({ text, label }: { text: string; label: string }) {
  const path = useMemo(() => {
    const { data } = encode(text, { border: 2, ecc: 'M' });
    const parts: string[] = [];
    data.forEach((row, y) => {
      row.forEach((dark, x) => {
        if (dark) parts.push(`M${x} ${y}h1v1h-1z`);
      });
    });
    return { d: parts.join(''), size: data.length };
  }, [text]);
  return (
    <svg
      className="qr-code"
      viewBox={`0 0 ${path.size} ${path.size}`}
      width="200"
      height="200"
      role="img"
      aria-label={label}
      shapeRendering="crispEdges"
      style={{ background: '#fff', borderRadius: 8 }}
    >
      <path d={path.d} fill="#000" />
    </svg>
  );
}

function PasswordCard() {
  const { api } = useConsole();
  const toast = useToast();
  const [form, setForm] = useState({ current: '', next: '', confirm: '' });
  const action = useAction();
  const [sending, setSending] = useState(false);
  const mismatch = form.confirm.length > 0 && form.confirm !== form.next;
  const nextProblem = (complete: boolean) => ruleProblem(fieldRules.password, form.next, complete);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setSending(true);
    if (mismatch || nextProblem(true)) return;
    const ok = await action.run(async () => {
      try {
        await api.call(calls.updateUser, {
          body: { password: form.next, current_password: form.current },
          context: 'Could not change the password',
          allowUnauthorized: true,
        });
      } catch (error) {
        if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
          throw new Error('The current password is not correct.');
        }
        throw error;
      }
    });
    if (ok) {
      setForm({ current: '', next: '', confirm: '' });
      setSending(false);
      toast('Password changed');
    }
  };
  return (
    <Card title="Password">
      <form className="card-body form" onSubmit={submit} style={{ maxWidth: 520 }}>
        {action.error ? <Alert>{action.error}</Alert> : null}
        <TextField
          label="Current password"
          type="password"
          autoComplete="current-password"
          value={form.current}
          onChange={(e) => setForm({ ...form, current: e.target.value })}
          required
        />
        <TextField
          label="New password"
          type="password"
          autoComplete="new-password"
          value={form.next}
          onChange={(e) => setForm({ ...form, next: e.target.value })}
          hint={fieldRules.password.hint}
          error={nextProblem(sending)}
          required
        />
        <TextField
          label="Confirm new password"
          type="password"
          autoComplete="new-password"
          value={form.confirm}
          onChange={(e) => setForm({ ...form, confirm: e.target.value })}
          error={mismatch ? 'The passwords do not match.' : null}
          required
        />
        <div>
          <Button type="submit" variant="primary" busy={action.pending}>
            Change password
          </Button>
        </div>
      </form>
    </Card>
  );
}

function EnableMfa({ onDone }: { onDone: () => void }) {
  const { api } = useConsole();
  const [secret, setSecret] = useState<MfaSecret | null>(null);
  const [code, setCode] = useState('');
  const [saved, setSaved] = useState(false);
  const action = useAction();
  const start = () =>
    action.run(async () =>
      setSecret(await api.call<MfaSecret>(calls.mfaGenerate, { context: 'Could not start two-step setup' })),
    );
  const enable = async () => {
    if (!secret) return;
    const ok = await action.run(async () => {
      try {
        await api.call(calls.mfaEnable, {
          body: {
            code: code.replace(/\s/g, ''),
            secret: secret.secret,
            recovery_codes: secret.recovery_codes,
          },
          context: 'Could not turn on two-step verification',
          allowUnauthorized: true,
        });
      } catch (error) {
        if (
          error instanceof ApiError &&
          (error.status === 401 || error.status === 400 || error.status === 403)
        ) {
          throw new Error('That code is not valid. Check the time on your phone and enter the current code.');
        }
        throw error;
      }
    });
    if (ok) onDone();
  };
  if (!secret) {
    return (
      <div className="stack" style={{ gap: 10 }}>
        {action.error ? <Alert>{action.error}</Alert> : null}
        <div>
          <Button variant="primary" onClick={start} busy={action.pending}>
            Set up two-step verification
          </Button>
        </div>
      </div>
    );
  }
  return (
    <div className="stack">
      <div className="grid-2" style={{ alignItems: 'start' }}>
        <div className="stack" style={{ gap: 8 }}>
          <h3>1. Scan the code</h3>
          <p className="muted">
            Scan with an authenticator app (1Password, Google Authenticator, Aegis…), or type the key.
          </p>
          <QrCode text={secret.link} label="QR code for your authenticator app" />
          <CopyField label="secret key" value={secret.secret} />
        </div>
        <div className="stack" style={{ gap: 8 }}>
          <h3>2. Keep your recovery codes</h3>
          <p className="muted">
            Each code signs you in once if you lose your phone. Store them somewhere safe.
          </p>
          <div className="codes" data-testid="recovery-codes">
            {secret.recovery_codes.map((c) => (
              <span key={c}>{c}</span>
            ))}
          </div>
          <label className="checkbox">
            <input type="checkbox" checked={saved} onChange={(e) => setSaved(e.target.checked)} />I have saved
            my recovery codes
          </label>
        </div>
      </div>
      <form
        className="form"
        style={{ maxWidth: 360 }}
        onSubmit={(e) => {
          e.preventDefault();
          void enable();
        }}
      >
        <h3>3. Enter the 6-digit code</h3>
        {action.error ? <Alert>{action.error}</Alert> : null}
        <TextField
          label="Verification code"
          inputMode="numeric"
          autoComplete="one-time-code"
          value={code}
          onChange={(e) => setCode(e.target.value)}
          maxLength={7}
          required
        />
        <div>
          <Button type="submit" variant="primary" busy={action.pending} disabled={!saved}>
            Turn on
          </Button>
        </div>
      </form>
    </div>
  );
}

function MfaCard() {
  const { api, replaceUser } = useConsole();
  const user = useUser();
  const toast = useToast();
  const [disabling, setDisabling] = useState(false);
  const [code, setCode] = useState('');
  const [useRecovery, setUseRecovery] = useState(false);
  const action = useAction();
  const disable = async () => {
    const ok = await action.run(async () => {
      try {
        await api.call(calls.mfaDisable, {
          body: useRecovery ? { recovery_code: code.trim() } : { code: code.replace(/\s/g, '') },
          context: 'Could not turn off two-step verification',
          allowUnauthorized: true,
        });
      } catch (error) {
        if (
          error instanceof ApiError &&
          (error.status === 401 || error.status === 400 || error.status === 403)
        ) {
          throw new Error(useRecovery ? 'That recovery code is not valid.' : 'That code is not valid.');
        }
        throw error;
      }
    });
    if (ok) {
      replaceUser({ mfa: false });
      setDisabling(false);
      toast('Two-step verification is off');
    }
  };
  return (
    <Card
      title={
        <div className="row">
          <h2>Two-step verification</h2>
          {user.mfa ? <span className="badge badge-ok">On</span> : <span className="badge">Off</span>}
        </div>
      }
    >
      <div className="card-body stack">
        {user.mfa ? (
          <>
            <p className="muted">
              Signing in asks for a code from your authenticator app after your password.
            </p>
            <div>
              <Button
                variant="danger"
                onClick={() => {
                  action.clearError();
                  setCode('');
                  setDisabling(true);
                }}
              >
                Turn off
              </Button>
            </div>
          </>
        ) : !user.recovery_email ? (
          <Alert kind="info" title="Add a recovery email first">
            Two-step verification needs a recovery email so you can get back in.{' '}
            <Link to="/settings/profile">Add one in your profile.</Link>
          </Alert>
        ) : (
          <>
            <p className="muted">
              Protect your account with a code from an authenticator app in addition to your password.
            </p>
            <EnableMfa
              onDone={() => {
                replaceUser({ mfa: true });
                toast('Two-step verification is on');
              }}
            />
          </>
        )}
      </div>
      <Dialog
        open={disabling}
        title="Turn off two-step verification?"
        description="Confirm with a current code from your app, or with one of your recovery codes."
        onClose={() => setDisabling(false)}
        onSubmit={disable}
        submitLabel="Turn off"
        submitVariant="danger"
        busy={action.pending}
        error={action.error}
      >
        <TextField
          label={useRecovery ? 'Recovery code' : 'Verification code'}
          value={code}
          onChange={(e) => setCode(e.target.value)}
          autoComplete="one-time-code"
          required
          autoFocus
        />
        <div>
          <Button size="sm" variant="ghost" onClick={() => setUseRecovery(!useRecovery)}>
            {useRecovery ? 'Use a code from the app' : 'Use a recovery code'}
          </Button>
        </div>
      </Dialog>
    </Card>
  );
}

/** An account made by single sign-on has no password of its own: the identity provider checks who the person is. */
function ManagedPasswordCard() {
  return (
    <Card title="Password">
      <div className="card-body">
        <p style={{ margin: 0 }}>
          You sign in through your organization's identity provider (single sign-on), which manages your
          password. Change it there.
        </p>
      </div>
    </Card>
  );
}

export function SecurityTab() {
  const user = useUser();
  return (
    <div className="stack">
      {user.origin === 'saml' ? <ManagedPasswordCard /> : <PasswordCard />}
      <MfaCard />
    </div>
  );
}
