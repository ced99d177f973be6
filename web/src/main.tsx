import './shell/styles.css';
import { StrictMode, useCallback, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app';
import { errorText } from './shell/api/errors';
import type { InstanceInfo } from './shell/api/types';
import { RouterProvider } from './shell/router';
import { ConsoleProvider } from './shell/session';
import { mergeSlots, type Slots, type WebModule } from './shell/slots';
import { ErrorState, Loading, ToastProvider } from './shell/ui/feedback';

// The console's plugins, listed explicitly; GET /info says which of them this server runs, and only those
// are downloaded, so one build serves every edition.
const pluginModules: Record<string, () => Promise<{ default: WebModule }>> = {
  community: () => import('../../plugins/community/web/index'),
  enterprise: () => import('../../plugins/enterprise/web/index'),
  cloud: () => import('../../plugins/cloud/web/index'),
};

async function boot(): Promise<{ info: InstanceInfo; slots: Slots }> {
  let response: Response;
  try {
    response = await fetch('/info', { headers: { Accept: 'application/json' } });
  } catch {
    throw new Error('The Gatehouse server could not be reached. Check that it is running, then try again.');
  }
  if (response.status === 503)
    throw new Error('The Gatehouse server cannot reach its database right now. Try again in a moment.');
  if (!response.ok)
    throw new Error(`The Gatehouse server answered ${response.status} when asked about itself.`);
  const info = (await response.json()) as InstanceInfo;
  const names = info.plugins && info.plugins.length > 0 ? info.plugins : ['community'];
  const modules = await Promise.all(
    names.flatMap((name) => {
      const load = pluginModules[name];
      return load ? [load().then((m) => m.default)] : [];
    }),
  );
  return { info, slots: mergeSlots(modules) };
}

function Root() {
  const [state, setState] = useState<{ info: InstanceInfo; slots: Slots } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(() => {
    setError(null);
    boot().then(setState, (reason: unknown) => setError(errorText(reason)));
  }, []);
  useEffect(load, [load]);
  if (error) {
    return (
      <main className="auth">
        <ErrorState message={error} onRetry={load} />
      </main>
    );
  }
  if (!state) {
    return (
      <main className="auth">
        <Loading label="Starting Gatehouse…" />
      </main>
    );
  }
  return (
    <ConsoleProvider info={state.info} slots={state.slots}>
      <ToastProvider>
        <App onSetupDone={load} />
      </ToastProvider>
    </ConsoleProvider>
  );
}

const container = document.getElementById('root');
if (container) {
  createRoot(container).render(
    <StrictMode>
      <RouterProvider>
        <Root />
      </RouterProvider>
    </StrictMode>,
  );
}
