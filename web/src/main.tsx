import './shell/styles.css';
import { StrictMode, useCallback, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app';
import { errorText } from './shell/api/errors';
import type { ConsoleModuleEntry, InstanceInfo } from './shell/api/types';
import { RouterProvider } from './shell/router';
import { ConsoleProvider } from './shell/session';
import { mergeSlots, type Slots, type WebModule } from './shell/slots';
import { ErrorState, Loading, ToastProvider, useToast } from './shell/ui/feedback';

/**
 * The running plugins' console modules, as GET /info lists them: each is an ES module the server serves (a bundled
 * plugin's and an outside plugin's alike) whose default export fills the shell's slots. React and the kit reach
 * them through the page's import map. A module that fails to load is named to the person instead of taking the
 * whole console down.
 */
async function loadModules(
  entries: ConsoleModuleEntry[],
): Promise<{ modules: WebModule[]; failed: string[] }> {
  const loaded = await Promise.all(
    entries.map(async ({ plugin, url }) => {
      try {
        const module = (await import(/* @vite-ignore */ url)) as { default?: WebModule };
        if (!module.default) throw new Error(`${url} has no default export`);
        return module.default;
      } catch (error) {
        console.error(`The console module of the ${plugin} plugin could not be loaded`, error);
        return plugin;
      }
    }),
  );
  return {
    modules: loaded.filter((m): m is WebModule => typeof m !== 'string'),
    failed: loaded.filter((m): m is string => typeof m === 'string'),
  };
}

interface Started {
  info: InstanceInfo;
  slots: Slots;
  failed: string[];
}

async function boot(): Promise<Started> {
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
  const { modules, failed } = await loadModules(info.console_modules ?? []);
  return { info, slots: mergeSlots(modules), failed };
}

/** Says once, after start, which plugins' screens are missing because their modules did not load. */
function FailedModules({ plugins }: { plugins: string[] }) {
  const toast = useToast();
  useEffect(() => {
    if (plugins.length > 0)
      toast(
        `The console could not load the screens of: ${plugins.join(', ')}. Reload to try again.`,
        'error',
      );
  }, [plugins, toast]);
  return null;
}

function Root() {
  const [state, setState] = useState<Started | null>(null);
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
        <FailedModules plugins={state.failed} />
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
