import { Component, type ReactNode, Suspense, useEffect } from 'react';
import { Setup } from './auth/setup';
import { SignIn } from './auth/sign-in';
import { sessionCalls } from './shell/api/calls';
import type { AuthenticatedUser } from './shell/api/types';
import { Layout } from './shell/layout';
import { matchPath, useLocation } from './shell/router';
import { useConsole } from './shell/session';
import { SettingsPage } from './shell/settings';
import { Button } from './shell/ui/controls';
import { Empty, Loading } from './shell/ui/feedback';
import { PageHeader } from './shell/ui/page';

/** Keeps one broken screen from blanking the whole console. */
class ScreenBoundary extends Component<{ children: ReactNode; resetKey: string }, { error: Error | null }> {
  override state: { error: Error | null } = { error: null };
  static getDerivedStateFromError(error: Error) {
    return { error };
  }
  override componentDidUpdate(previous: { resetKey: string }) {
    if (previous.resetKey !== this.props.resetKey && this.state.error) this.setState({ error: null });
  }
  override render() {
    if (this.state.error) {
      return (
        <Empty
          title="This screen ran into a problem"
          action={<Button onClick={() => window.location.reload()}>Reload the page</Button>}
        >
          {/chunk|dynamically imported module/i.test(this.state.error.message)
            ? 'A newer version of the console may have been installed. Reload to get it.'
            : this.state.error.message}
        </Empty>
      );
    }
    return this.props.children;
  }
}

function NotFound() {
  return (
    <>
      <PageHeader title="Page not found" />
      <Empty title="There is nothing at this address">Check the link, or pick a page from the menu.</Empty>
    </>
  );
}

function ForInstanceAdmins() {
  return (
    <>
      <PageHeader title="Instance administration" />
      <Empty title="This area is for instance administrators">
        An instance administrator can make you one, in Instance, Users, or with{' '}
        <code>gatehouse user admin</code>.
      </Empty>
    </>
  );
}

function Screens() {
  const { slots, user } = useConsole();
  const { pathname } = useLocation();
  let screen: ReactNode = <NotFound />;
  const settings = matchPath('/settings/:tab', pathname) ?? (pathname === '/settings' ? { tab: '' } : null);
  if (settings) screen = <SettingsPage params={settings} />;
  else {
    for (const page of slots.pages) {
      const params = matchPath(page.path, pathname);
      if (params) {
        const Page = page.component;
        screen = page.instanceAdmin && !user?.admin ? <ForInstanceAdmins /> : <Page params={params} />;
        break;
      }
    }
  }
  return (
    <Layout>
      <ScreenBoundary resetKey={pathname}>
        <Suspense fallback={<Loading />}>{screen}</Suspense>
      </ScreenBoundary>
      {slots.overlays.map((Overlay, index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the list of overlays is fixed after boot
        <Overlay key={index} />
      ))}
    </Layout>
  );
}

/** Refreshes the stored user record once per load, so a changed name or MFA state shows after a reload. */
function UserRefresh() {
  const { api, replaceUser } = useConsole();
  useEffect(() => {
    api.call<Partial<AuthenticatedUser>>(sessionCalls.currentUser).then(
      (fresh) => replaceUser(fresh),
      () => {
        // A 401 already ended the session through the client; other failures keep the stored record.
      },
    );
  }, [api, replaceUser]);
  return null;
}

/** A page a plugin serves without sign-in (sign-up, e-mail verification...), when the address is one. */
function PublicPage({ pathname }: { pathname: string }) {
  const { slots } = useConsole();
  for (const page of slots.publicPages) {
    const params = matchPath(page.path, pathname);
    if (params) {
      const Page = page.component;
      return (
        <ScreenBoundary resetKey={pathname}>
          <Suspense fallback={<Loading />}>
            <Page params={params} />
          </Suspense>
        </ScreenBoundary>
      );
    }
  }
  return null;
}

export function App({ onSetupDone }: { onSetupDone: () => void }) {
  const { info, user, slots } = useConsole();
  const { pathname } = useLocation();
  if (pathname === '/setup' || (!info.setup && !user)) return <Setup onDone={onSetupDone} />;
  if (slots.publicPages.some((p) => matchPath(p.path, pathname))) return <PublicPage pathname={pathname} />;
  if (!user) return <SignIn />;
  return (
    <>
      <UserRefresh />
      <Screens />
    </>
  );
}
