import { type ApiClient, Link, useApi, useResource, useUser } from '@gatehouse/console';
import { useSha256 } from '../access/use-sha256';
import { calls } from '../api';
import type { Device, PublicKey } from '../types';
import { type DeviceKind, deviceKind } from './kind';

/**
 * Whether a namespace public key reaches a device, as the gateway decides it: a tag filter matches when the device
 * carries one of the tags, a hostname filter is a regular expression searched (unanchored) in the device's name.
 * The gateway runs RE2; a pattern the browser cannot compile matches nothing here, as an invalid one does there.
 */
export function keyReaches(key: Pick<PublicKey, 'filter'>, device: Pick<Device, 'name' | 'tags'>): boolean {
  const { filter } = key;
  if ('tags' in filter) return filter.tags.some((t) => (device.tags ?? []).includes(t));
  try {
    return new RegExp(filter.hostname).test(device.name);
  } catch {
    return false;
  }
}

const PER_PAGE = 100;
/** Enough for any namespace a person reads through; a longer list is cut here, and said to be. */
const MAX_PAGES = 10;

async function allKeys(api: ApiClient): Promise<{ keys: PublicKey[]; complete: boolean }> {
  const keys: PublicKey[] = [];
  for (let page = 1; page <= MAX_PAGES; page++) {
    const answer = await api.page<PublicKey>(calls.listPublicKeys, {
      query: { page, per_page: PER_PAGE },
      context: 'Could not load the public keys',
    });
    keys.push(...answer.items);
    if (answer.items.length < PER_PAGE || keys.length >= answer.total) return { keys, complete: true };
  }
  return { keys, complete: false };
}

function Sha256({ data }: { data: string }) {
  const sha256 = useSha256(data);
  return sha256 ? <code className="fingerprint">{sha256}</code> : null;
}

/**
 * Under the ssh command: which sign-ins the gateway will take for this device, so that a first `ssh` with a key
 * nobody registered is not a bare refusal. The namespace's public keys whose filter reaches the device are listed
 * (the gateway then signs in to the device with its own key); a device's agent also takes the password of an
 * account on the device, relayed by the gateway.
 */
export function SignInMethods({ device, kind }: { device: Device; kind: DeviceKind }) {
  const api = useApi();
  const user = useUser();
  const keys = useResource(() => allKeys(api), [api, user.tenant]);
  const reaching = (keys.data?.keys ?? []).filter((k) => keyReaches(k, device));
  const canAdd = user.role === 'owner' || user.role === 'administrator';
  const addKey = canAdd ? (
    <>
      <Link to="/public-keys">Add your public key</Link> to sign in with it.
    </>
  ) : (
    <>
      An administrator of this namespace can add yours in <Link to="/public-keys">Public keys</Link>.
    </>
  );
  return (
    <section className="stack sign-in-methods" style={{ gap: 6 }} aria-labelledby="sign-in-methods">
      <h3 className="label" id="sign-in-methods">
        Signing in
      </h3>
      {keys.error ? (
        <p className="muted">{keys.error}</p>
      ) : !keys.data ? (
        <p className="muted">Looking up the public keys that reach this {kind.noun}…</p>
      ) : reaching.length === 0 ? (
        <p>
          No public key registered in this namespace reaches {device.name}, so the gateway refuses a sign-in
          with your own key. {addKey}
        </p>
      ) : (
        <>
          <p>
            {reaching.length === 1 ? 'This public key reaches' : `These ${reaching.length} public keys reach`}{' '}
            {device.name}; the gateway takes a sign-in with {reaching.length === 1 ? 'it' : 'any of them'}.
            Another key is refused. {addKey}
          </p>
          <ul className="sign-in-keys">
            {reaching.map((k) => (
              <li key={k.fingerprint}>
                <strong>{k.name}</strong>{' '}
                {k.username === '.*' ? (
                  <span className="muted">as any user</span>
                ) : (
                  <span className="muted">
                    as users matching <code>{k.username}</code>
                  </span>
                )}
                <br />
                <Sha256 data={k.data} />
              </li>
            ))}
          </ul>
        </>
      )}
      {keys.data && !keys.data.complete ? (
        <p className="muted">Only the first {PER_PAGE * MAX_PAGES} keys of the namespace were checked.</p>
      ) : null}
      {kind === deviceKind ? (
        <p className="muted">
          A password works too: the password of the account on the {kind.noun} you sign in as, which the
          gateway hands to the {kind.noun}.
        </p>
      ) : null}
    </section>
  );
}
