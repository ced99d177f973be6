import { Suspense } from 'react';
import { Link, Navigate } from './router';
import { useConsole } from './session';
import { Loading } from './ui/feedback';
import { PageHeader } from './ui/page';

/** /settings/:tab — account and namespace tabs contributed by plugins. */
export function SettingsPage({ params }: { params: Record<string, string> }) {
  const { slots } = useConsole();
  const tabs = slots.settingsTabs;
  const active = tabs.find((t) => t.id === params.tab);
  const first = tabs[0];
  if (!active) return first ? <Navigate to={`/settings/${first.id}`} /> : null;
  const Tab = active.component;
  const groups: { scope: 'account' | 'namespace'; label: string }[] = [
    { scope: 'account', label: 'Account' },
    { scope: 'namespace', label: 'Namespace' },
  ];
  return (
    <>
      <PageHeader
        title="Settings"
        description={active.scope === 'account' ? 'Your own account.' : 'The current namespace.'}
      />
      <nav className="tabs" aria-label="Settings sections">
        {groups.flatMap((group) =>
          tabs
            .filter((t) => t.scope === group.scope)
            .map((t) => (
              <Link
                key={t.id}
                to={`/settings/${t.id}`}
                aria-current={t.id === active.id ? 'page' : undefined}
              >
                {t.label}
              </Link>
            )),
        )}
      </nav>
      <Suspense fallback={<Loading />}>
        <Tab />
      </Suspense>
    </>
  );
}
