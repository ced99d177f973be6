import {
  createContext,
  type ReactNode,
  useCallback,
  useContext,
  useEffect,
  useMemo,
  useRef,
  useState,
} from 'react';
import { sessionCalls } from './api/calls';
import { ApiClient } from './api/client';
import type { AuthenticatedUser, InstanceInfo } from './api/types';
import type { Slots } from './slots';

// Auth state of the console: the instance info, the signed-in user (with the token), and the API client
// that carries that token. The record is kept in localStorage so a reload keeps the person signed in.

const storageKey = 'gatehouse.auth';

export interface ConsoleValue {
  info: InstanceInfo;
  slots: Slots;
  user: AuthenticatedUser | null;
  api: ApiClient;
  signIn: (user: AuthenticatedUser) => void;
  /**
   * Ends the session: on the server (the sign-in ends, so a copy of its token stops working), then here, whatever
   * the server answers (it may be away). `reason` is shown once on the sign-in screen.
   */
  signOut: (reason?: string) => Promise<void>;
  /** Why the last session ended, shown once on the sign-in screen. */
  endedReason: string | null;
  /** Takes a new user record for another namespace (switch, leave) and keeps the person signed in. */
  replaceUser: (user: Partial<AuthenticatedUser>) => void;
  /** The server answered 503 (it cannot reach its database) and has not answered normally since. */
  serverAway: boolean;
}

const ConsoleContext = createContext<ConsoleValue | null>(null);

export function readStoredUser(): AuthenticatedUser | null {
  try {
    const text = localStorage.getItem(storageKey);
    if (!text) return null;
    const value = JSON.parse(text) as AuthenticatedUser;
    return typeof value.token === 'string' && value.token ? value : null;
  } catch {
    return null;
  }
}

export function ConsoleProvider({
  info,
  slots,
  children,
}: {
  info: InstanceInfo;
  slots: Slots;
  children: ReactNode;
}) {
  const [user, setUser] = useState<AuthenticatedUser | null>(readStoredUser);
  const [endedReason, setEndedReason] = useState<string | null>(null);
  const [serverAway, setServerAway] = useState(false);
  const tokenRef = useRef<string | null>(user?.token ?? null);

  const store = useCallback((next: AuthenticatedUser | null) => {
    tokenRef.current = next?.token ?? null;
    if (next) localStorage.setItem(storageKey, JSON.stringify(next));
    else localStorage.removeItem(storageKey);
    setUser(next);
  }, []);

  /** Forgets the session here only: the server already refused its token. */
  const endHere = useCallback(
    (reason?: string) => {
      store(null);
      setEndedReason(reason ?? null);
    },
    [store],
  );

  const api = useMemo(
    () =>
      new ApiClient(
        () => tokenRef.current,
        () => endHere('Your session has ended. Please sign in again.'),
        '',
        setServerAway,
      ),
    [endHere],
  );

  const signOut = useCallback(
    async (reason?: string) => {
      // A plugin may end the sign-in itself and name where the browser goes next (the IdP's single logout).
      let next: string | null = null;
      if (tokenRef.current) {
        for (const handler of slots.signOut) {
          next = await handler(api, info).catch(() => null);
          if (next !== null) break;
        }
        if (next === null) await api.call(sessionCalls.signOut, { allowUnauthorized: true }).catch(() => {});
      }
      endHere(reason);
      if (next) window.location.assign(next);
    },
    [api, endHere, slots, info],
  );

  // While the server cannot reach its database, ask it every few seconds whether it is ready again, so the
  // notice goes away by itself (screens load again on the next thing the person does).
  useEffect(() => {
    if (!serverAway) return;
    const timer = setInterval(() => {
      fetch('/readyz', { headers: { Accept: 'application/json' } }).then(
        (r) => {
          if (r.ok) setServerAway(false);
        },
        () => {},
      );
    }, 3000);
    return () => clearInterval(timer);
  }, [serverAway]);

  const signIn = useCallback(
    (next: AuthenticatedUser) => {
      setEndedReason(null);
      store(next);
    },
    [store],
  );

  const replaceUser = useCallback(
    (patch: Partial<AuthenticatedUser>) => {
      const previous = readStoredUser();
      if (!previous) return;
      store({ ...previous, ...patch, token: patch.token || previous.token });
    },
    [store],
  );

  const value = useMemo(
    () => ({ info, slots, user, api, signIn, signOut, endedReason, replaceUser, serverAway }),
    [info, slots, user, api, signIn, signOut, endedReason, replaceUser, serverAway],
  );
  return <ConsoleContext.Provider value={value}>{children}</ConsoleContext.Provider>;
}

export function useConsole(): ConsoleValue {
  const value = useContext(ConsoleContext);
  if (!value) throw new Error('useConsole outside ConsoleProvider');
  return value;
}

export function useApi(): ApiClient {
  return useConsole().api;
}

/** The signed-in user; only for screens behind the sign-in gate. */
export function useUser(): AuthenticatedUser {
  const { user } = useConsole();
  if (!user) throw new Error('useUser without a signed-in user');
  return user;
}
