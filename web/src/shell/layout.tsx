import { type ReactNode, useEffect, useRef, useState } from 'react';
import { sessionCalls } from './api/calls';
import type { AuthenticatedUser, NamespaceSummary } from './api/types';
import { NamespaceNameField, useCreateNamespace } from './namespace-create';
import { useAction, useResource } from './resource';
import { Link, useLocation, useNavigate } from './router';
import { useConsole, useUser } from './session';
import type { SettingsTab } from './slots';
import { currentTheme, setTheme, type Theme } from './theme';
import { Button } from './ui/controls';
import { Dialog } from './ui/dialog';
import { Alert, useToast } from './ui/feedback';
import { icons, Logo } from './ui/icons';

function ThemeToggle() {
  const [theme, setLocal] = useState<Theme>(currentTheme);
  const next: Theme = theme === 'dark' ? 'light' : 'dark';
  return (
    <Button
      variant="ghost"
      className="icon-btn"
      aria-label={`Switch to ${next} mode`}
      title={`Switch to ${next} mode`}
      onClick={() => {
        setTheme(next);
        setLocal(next);
      }}
    >
      {theme === 'dark' ? icons.sun : icons.moon}
    </Button>
  );
}

/** Closes a popup menu on Escape or a click outside, and hands focus back to its button. */
function useMenu() {
  const [open, setOpen] = useState(false);
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!open) return;
    const onClick = (e: MouseEvent) => {
      if (ref.current && !ref.current.contains(e.target as Node)) setOpen(false);
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        setOpen(false);
        ref.current?.querySelector<HTMLButtonElement>('button')?.focus();
      }
    };
    document.addEventListener('mousedown', onClick);
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('mousedown', onClick);
      document.removeEventListener('keydown', onKey);
    };
  }, [open]);
  return { open, setOpen, ref };
}

function NamespaceSwitcher() {
  const { api, replaceUser } = useConsole();
  const user = useUser();
  const toast = useToast();
  const navigate = useNavigate();
  const menu = useMenu();
  const [creating, setCreating] = useState(false);
  const [name, setName] = useState('');
  const action = useAction();
  const namespaces = useResource(
    () => api.page<NamespaceSummary>(sessionCalls.listNamespaces, { query: { page: 1, per_page: 100 } }),
    [api, user.tenant],
  );
  const current = namespaces.data?.items.find((n) => n.tenant_id === user.tenant);
  // The button's accessible name starts with the words it shows (WCAG 2.5.3, label in name).
  const shown = current?.name ?? (namespaces.loading ? 'Loading…' : 'No namespace');

  const switchTo = async (tenant: string) => {
    menu.setOpen(false);
    const ok = await action.run(async () => {
      const next = await api.call<Partial<AuthenticatedUser>>(sessionCalls.switchNamespace, {
        params: { tenant },
        context: 'Could not switch namespace',
      });
      replaceUser({ ...next, tenant });
    });
    if (ok) navigate('/');
    else if (action.error) toast(action.error, 'error');
  };

  const { create: createNamespace, action: creation } = useCreateNamespace();
  const create = async () => {
    if (await createNamespace(name)) {
      setCreating(false);
      setName('');
    }
  };

  return (
    <div className="menu" ref={menu.ref}>
      <Button
        aria-haspopup="true"
        aria-expanded={menu.open}
        onClick={() => menu.setOpen(!menu.open)}
        aria-label={`Namespace: ${shown}. Change namespace`}
      >
        {icons.users}
        <span>{shown}</span>
        {icons.chevron}
      </Button>
      {menu.open ? (
        <div className="menu-list">
          {namespaces.error ? (
            <p className="muted" style={{ padding: 8 }}>
              {namespaces.error}
            </p>
          ) : null}
          {namespaces.data?.items.map((n) => (
            <button
              type="button"
              key={n.tenant_id}
              onClick={() => switchTo(n.tenant_id)}
              aria-current={n.tenant_id === user.tenant ? 'true' : undefined}
            >
              <span style={{ width: 16 }}>{n.tenant_id === user.tenant ? icons.check : null}</span>
              {n.name}
            </button>
          ))}
          <hr />
          <button
            type="button"
            onClick={() => {
              menu.setOpen(false);
              creation.clearError();
              setCreating(true);
            }}
          >
            {icons.plus} Create namespace
          </button>
        </div>
      ) : null}
      <Dialog
        open={creating}
        title="Create a namespace"
        description="A namespace groups devices, members and their settings. You become its owner."
        onClose={() => setCreating(false)}
        onSubmit={create}
        submitLabel="Create"
        busy={creation.pending}
        error={creation.error}
      >
        <NamespaceNameField value={name} onChange={setName} autoFocus />
      </Dialog>
    </div>
  );
}

function UserMenu() {
  const { signOut } = useConsole();
  const user = useUser();
  const menu = useMenu();
  const navigate = useNavigate();
  return (
    <div className="menu" ref={menu.ref}>
      <Button
        variant="ghost"
        aria-haspopup="true"
        aria-expanded={menu.open}
        onClick={() => menu.setOpen(!menu.open)}
        aria-label={`Account menu for ${user.name || user.user}`}
      >
        {icons.user}
        <span className="hide-small">{user.name || user.user}</span>
      </Button>
      {menu.open ? (
        <div className="menu-list" data-align="right">
          <div style={{ padding: '6px 10px' }}>
            <div>{user.name || user.user}</div>
            <div className="muted" style={{ fontSize: 12.5 }}>
              {user.email}
            </div>
          </div>
          <hr />
          <button
            type="button"
            onClick={() => {
              menu.setOpen(false);
              navigate('/settings/profile');
            }}
          >
            {icons.settings} Account settings
          </button>
          <button type="button" onClick={() => void signOut()}>
            {icons.logout} Sign out
          </button>
        </div>
      ) : null}
    </div>
  );
}

function isActive(pathname: string, to: string): boolean {
  if (to === '/') return pathname === '/';
  return pathname === to || pathname.startsWith(`${to}/`);
}

/** Which settings (account or namespace) a path shows, if it is a settings page. */
function settingsScopeOf(pathname: string, tabs: SettingsTab[]): SettingsTab['scope'] | undefined {
  const m = /^\/settings(?:\/([^/]+))?\/?$/.exec(pathname);
  if (!m) return undefined;
  if (!m[1]) return 'namespace';
  return tabs.find((t) => t.id === m[1])?.scope;
}

export function Layout({ children }: { children: ReactNode }) {
  const { slots, info, user, serverAway } = useConsole();
  const { pathname } = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  // biome-ignore lint/correctness/useExhaustiveDependencies: close the phone menu whenever the page changes
  useEffect(() => setMenuOpen(false), [pathname]);
  const sections: { id: string; label: string | null }[] = [
    { id: 'main', label: null },
    { id: 'manage', label: 'Manage' },
    { id: 'settings', label: 'Settings' },
    { id: 'instance', label: 'Instance' },
  ];
  return (
    <div className="app" data-menu={menuOpen ? 'open' : 'closed'}>
      <a className="skip-link" href="#content">
        Skip to content
      </a>
      <aside className="sidebar" aria-label="Main">
        <Link to="/" className="brand">
          <Logo />
          Gatehouse
        </Link>
        <nav className="nav" aria-label="Primary">
          {sections.map((section) => {
            const items = slots.nav.filter(
              (n) => (n.section ?? 'main') === section.id && (!n.instanceAdmin || user?.admin),
            );
            if (items.length === 0) return null;
            return (
              <div key={section.id} className="nav">
                {section.label ? <div className="nav-section">{section.label}</div> : null}
                {items.map((item) => (
                  <Link
                    key={item.to}
                    to={item.to}
                    aria-current={
                      (
                        item.settingsScope
                          ? settingsScopeOf(pathname, slots.settingsTabs) === item.settingsScope
                          : isActive(pathname, item.to)
                      )
                        ? 'page'
                        : undefined
                    }
                  >
                    {item.icon}
                    {item.label}
                    {item.badge ? <item.badge /> : null}
                  </Link>
                ))}
              </div>
            );
          })}
        </nav>
        <div className="sidebar-foot faint" style={{ fontSize: 12, padding: '12px 10px 0' }}>
          Gatehouse {info.version}
        </div>
      </aside>
      <button type="button" className="scrim" aria-label="Close menu" onClick={() => setMenuOpen(false)} />
      <div className="main">
        <header className="topbar">
          <Button
            variant="ghost"
            className="icon-btn menu-button"
            aria-label="Open menu"
            aria-expanded={menuOpen}
            onClick={() => setMenuOpen(true)}
          >
            {icons.menu}
          </Button>
          <NamespaceSwitcher />
          <div className="spacer" />
          <ThemeToggle />
          <UserMenu />
        </header>
        <main className="content" id="content" tabIndex={-1}>
          {serverAway ? (
            <Alert kind="warn" title="The server cannot reach its database right now.">
              {' '}
              You are still signed in. Screens will load again as soon as it is back.
            </Alert>
          ) : null}
          {children}
        </main>
      </div>
    </div>
  );
}

export { ThemeToggle };
