import { Suspense } from 'react';
import { Link, Navigate } from './router';
import { useConsole } from './session';
import { Loading } from './ui/feedback';
import { PageHeader } from './ui/page';

/**
 * /settings/:tab — two pages: Account settings (the person's own account, in every namespace) and Namespace
 * settings (the current namespace), each with only its own tabs, contributed by plugins.
 */
export function SettingsPage({ params }: { params: Record<string, string> }) {
  const { slots } = useConsole();
  const tabs = slots.settingsTabs;
  const active = tabs.find((t) => t.id === params.tab);
  const first = tabs.find((t) => t.scope === 'namespace') ?? tabs[0];
  if (!active) return first ? <Navigate to={`/settings/${first.id}`} /> : null;
  const Tab = active.component;
  const account = active.scope === 'account';
  const other = tabs.find((t) => t.scope !== active.scope);
  return (
    <>
      <PageHeader
        title={account ? 'Account settings' : 'Namespace settings'}
        description={
          account
            ? 'Your own account: it goes with you to every namespace.'
            : 'The current namespace, shared by its members.'
        }
        actions={
          other ? (
            <Link to={`/settings/${other.id}`}>{account ? 'Namespace settings' : 'Account settings'} →</Link>
          ) : null
        }
      />
      <nav
        className="tabs"
        aria-label={account ? 'Account settings sections' : 'Namespace settings sections'}
      >
        {tabs
          .filter((t) => t.scope === active.scope)
          .map((t) => (
            <Link key={t.id} to={`/settings/${t.id}`} aria-current={t.id === active.id ? 'page' : undefined}>
              {t.label}
            </Link>
          ))}
      </nav>
      <Suspense fallback={<Loading />}>
        <Tab />
      </Suspense>
    </>
  );
}
