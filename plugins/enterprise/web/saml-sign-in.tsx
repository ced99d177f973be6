import {
  Alert,
  ApiError,
  type AuthenticatedUser,
  Button,
  type InstanceInfo,
  useAction,
  useApi,
  useConsole,
} from '@gatehouse/console';
import { useEffect, useRef, useState } from 'react';
import { calls } from './api';

/** What the assertion consumer's refusal reasons (`#sso-error=<reason>`) mean to the person signing in. */
const refusals: Record<string, string> = {
  signature: "the identity provider's answer was not signed with its certificate.",
  weak: 'the identity provider signed its answer with SHA-1, which this server refuses. Ask its administrator to sign with SHA-256.',
  audience: 'the identity provider addressed its answer to another service.',
  destination: 'the identity provider addressed its answer to another service.',
  issuer: 'the answer came from another identity provider than the one set up.',
  expired: 'the answer came too late (or the clocks disagree). Try again.',
  request: 'the answer does not belong to a sign-in started here, or it was used already. Try again.',
  replay: 'that answer was used already. Try again.',
  account: 'your account cannot sign in here (it may be disabled, or the IdP sent no e-mail address).',
  idp: 'the identity provider did not sign you in.',
  unsolicited:
    'the sign-in was started at the identity provider, which this server does not accept. Use "Sign in with SSO" here.',
  busy: 'too many sign-ins from your address were refused. Wait a few minutes, then try again.',
};

/**
 * The sign-in screen's single sign-on: the button sends the browser to the identity provider; coming back, the
 * assertion consumer sends the browser back to the page it started from with a one-time code in the address's fragment (never sent to a server, so no log keeps it),
 * which this exchanges for the user record, as the password form's answer.
 */
export function SamlSignIn({ info }: { info: InstanceInfo }) {
  const api = useApi();
  const { signIn } = useConsole();
  const action = useAction();
  const { run } = action;
  const [refused, setRefused] = useState<string | null>(null);
  const exchanged = useRef(false);

  useEffect(() => {
    const fragment = new URLSearchParams(window.location.hash.slice(1));
    const code = fragment.get('sso');
    const error = fragment.get('sso-error');
    if (!code && !error) return;
    // The fragment is spent: take it off the address so a reload or a bookmark does not carry it.
    window.history.replaceState(null, '', window.location.pathname + window.location.search);
    if (error) {
      setRefused(`Single sign-on did not go through: ${refusals[error] ?? 'the answer was refused.'}`);
      return;
    }
    if (exchanged.current) return;
    exchanged.current = true;
    void run(async () => {
      try {
        signIn(
          await api.call<AuthenticatedUser>(calls.samlToken, {
            body: { code },
            allowUnauthorized: true,
            context: 'Single sign-on did not go through',
          }),
        );
      } catch (error) {
        if (error instanceof ApiError && error.status === 401) {
          throw new Error('Single sign-on did not go through: the sign-in took too long. Try again.');
        }
        throw error;
      }
    });
  }, [run, api, signIn]);

  if (!info.authentication.saml) return null;
  const start = () =>
    action.run(async () => {
      setRefused(null);
      // The page the person was sent to sign in from (the console shows sign-in at any address): the server
      // brings them back there.
      const page = window.location.pathname + window.location.search;
      const answer = await api.call<{ url: string }>(calls.samlUrl, {
        // An address the server would refuse (`//` in it, very long) just comes back to Home.
        query: { return_to: page === '/' || page.includes('//') || page.length > 512 ? undefined : page },
        context: 'Single sign-on is not available',
      });
      window.location.assign(answer.url);
    });
  return (
    <>
      {info.authentication.local ? (
        <div className="row muted" style={{ justifyContent: 'center', fontSize: 12.5 }}>
          or
        </div>
      ) : null}
      {refused ? <Alert>{refused}</Alert> : null}
      {action.error ? <Alert>{action.error}</Alert> : null}
      <Button
        className="btn-block"
        variant={info.authentication.local ? 'default' : 'primary'}
        onClick={start}
        busy={action.pending}
      >
        Sign in with SSO
      </Button>
    </>
  );
}
