import {
  Alert,
  Button,
  Card,
  CopyField,
  ErrorState,
  formatDate,
  Link,
  Loading,
  SelectField,
  useAction,
  useApi,
  useCan,
  useResource,
  useToast,
  useUser,
} from '@gatehouse/console';
import { useState } from 'react';
import { calls } from '../api';
import type { Namespace } from '../types';
import { LiveTerminal } from './watch';

/** A share link as the server lists it. */
interface Share {
  id: string;
  created_by: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
  uses: number;
  last_used_at: string | null;
  active: boolean;
}

const LIFETIMES = [
  { value: String(15 * 60), label: '15 minutes' },
  { value: String(60 * 60), label: '1 hour' },
  { value: String(4 * 60 * 60), label: '4 hours' },
  { value: String(24 * 60 * 60), label: '24 hours' },
];

function stateOf(share: Share): string {
  if (share.revoked_at) return `Revoked ${formatDate(share.revoked_at)}`;
  if (!share.active) return `Expired ${formatDate(share.expires_at)}`;
  return `Works until ${formatDate(share.expires_at)}`;
}

/**
 * Read-only links to this live session for people without an account, for the namespace's administrators: make
 * one (shown once), see each link's uses, revoke it. Says so when the namespace keeps links off.
 */
export function ShareLinks({ uid }: { uid: string }) {
  const api = useApi();
  const user = useUser();
  const toast = useToast();
  const mayShare = useCan()(calls.createShare, 'share sessions');
  const [lifetime, setLifetime] = useState(String(60 * 60));
  const [made, setMade] = useState<string | null>(null);
  const create = useAction();
  const revoke = useAction();
  const namespace = useResource(
    () =>
      api.call<Namespace>(calls.getNamespace, {
        params: { tenant: user.tenant },
        context: 'Could not load the namespace',
      }),
    [api, user.tenant],
  );
  const shares = useResource(
    () =>
      mayShare.allowed
        ? api.call<Share[]>(calls.listShares, { params: { uid }, context: 'Could not load the share links' })
        : Promise.resolve([] as Share[]),
    [api, uid, mayShare.allowed],
  );
  if (!mayShare.allowed) return null;
  const enabled = namespace.data?.settings?.session_share_links === true;

  const makeLink = async () => {
    setMade(null);
    await create.run(async () => {
      const answer = await api.call<{ url: string }>(calls.createShare, {
        params: { uid },
        body: { expires_in: Number(lifetime) },
        context: 'Could not make the link',
      });
      setMade(answer.url);
      shares.reload();
    });
  };
  const revokeLink = async (id: string) => {
    const ok = await revoke.run(() =>
      api.call(calls.revokeShare, { params: { uid, id }, context: 'Could not revoke the link' }),
    );
    if (ok) {
      toast('Link revoked: it no longer works');
      shares.reload();
    }
  };

  return (
    <Card title="Share links">
      <div className="card-body stack">
        {namespace.error ? <ErrorState message={namespace.error} onRetry={namespace.reload} /> : null}
        {!namespace.data && !namespace.error ? <Loading /> : null}
        {namespace.data && !enabled ? (
          <p className="muted">
            Share links are off in this namespace. An owner or administrator can turn them on in{' '}
            <Link to="/settings/namespace">Settings → Namespace</Link>.
          </p>
        ) : null}
        {enabled ? (
          <>
            <p className="muted">
              A link lets someone without an account watch this session, read-only, until it expires or you
              revoke it. The person in the session is told when someone watches through a link.
            </p>
            <div className="row" style={{ gap: 10, alignItems: 'flex-end', flexWrap: 'wrap' }}>
              <SelectField
                label="Link works for"
                value={lifetime}
                options={LIFETIMES}
                onChange={(e) => setLifetime(e.target.value)}
              />
              <Button variant="primary" onClick={() => void makeLink()} disabled={create.pending}>
                Make a link
              </Button>
            </div>
            {create.error ? <Alert>{create.error}</Alert> : null}
            {made ? (
              <div className="stack" style={{ gap: 6 }}>
                <CopyField value={made} label="Share link" />
                <p className="muted">Copy it now: it is shown only once.</p>
              </div>
            ) : null}
          </>
        ) : null}
        {shares.error ? <ErrorState message={shares.error} onRetry={shares.reload} /> : null}
        {revoke.error ? <Alert>{revoke.error}</Alert> : null}
        {(shares.data ?? []).length > 0 ? (
          <ul
            className="stack"
            style={{ gap: 8, listStyle: 'none', padding: 0, margin: 0 }}
            aria-label="Links made"
          >
            {(shares.data ?? []).map((share) => (
              <li
                key={share.id}
                className="row"
                style={{ gap: 10, justifyContent: 'space-between', flexWrap: 'wrap' }}
              >
                <span>
                  By {share.created_by} · {stateOf(share)} · opened {share.uses}{' '}
                  {share.uses === 1 ? 'time' : 'times'}
                  {share.last_used_at ? `, last ${formatDate(share.last_used_at)}` : ''}
                </span>
                {share.active ? (
                  <Button
                    variant="danger"
                    onClick={() => void revokeLink(share.id)}
                    disabled={revoke.pending}
                  >
                    Revoke
                  </Button>
                ) : null}
              </li>
            ))}
          </ul>
        ) : null}
      </div>
    </Card>
  );
}

/** What a share link's page shows first. */
interface ShareInfo {
  device: string;
  username: string;
  started_at: string;
  active: boolean;
  expires_at: string;
}

/** `/share/:token`: a live session through a share link, for someone without an account. */
export function SharedSessionPage({ params }: { params: Record<string, string> }) {
  const api = useApi();
  const token = params.token ?? '';
  const info = useResource(
    () => api.call<ShareInfo>(calls.shareInfo, { params: { token }, context: 'Could not open the link' }),
    [api, token],
  );
  return (
    <main className="shared-session stack" style={{ maxWidth: 1000, margin: '0 auto', padding: 16 }}>
      <h1>Shared terminal</h1>
      {info.error ? (
        <Alert kind="error" title="This link opens nothing">
          It may have expired or been revoked. Ask whoever sent it for a new one.
        </Alert>
      ) : !info.data ? (
        <Loading />
      ) : (
        <>
          <p>
            {info.data.username} on <strong>{info.data.device}</strong>, since{' '}
            {formatDate(info.data.started_at)}. The link works until {formatDate(info.data.expires_at)}. You
            can watch, not type; the person in the session is told that someone is watching.
          </p>
          {info.data.active ? (
            <LiveTerminal
              call={calls.watchShare}
              params={{ token }}
              seat={0}
              autoStart
              onEnded={() => undefined}
              endedNote="Its last screen is below."
            />
          ) : (
            <Alert kind="info" title="The session ended">
              There is nothing to watch any more.
            </Alert>
          )}
        </>
      )}
    </main>
  );
}
