import { Alert, Button, type InstanceInfo, useAction, useApi } from '@gatehouse/web/shell';

/** Shown on the sign-in screen when the server has SAML turned on. */
export function SamlSignIn({ info }: { info: InstanceInfo }) {
  const api = useApi();
  const action = useAction();
  if (!info.authentication.saml) return null;
  const start = () =>
    action.run(async () => {
      const answer = await api.call<{ url: string }>('samlUrl', {
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
      {action.error ? <Alert>{action.error}</Alert> : null}
      <Button className="btn-block" onClick={start} busy={action.pending}>
        Sign in with single sign-on
      </Button>
    </>
  );
}
