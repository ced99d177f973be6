import { useApi, useLocation, useUser } from '@gatehouse/console';
import { useEffect, useState } from 'react';
import { calls } from '../api';
import type { Stats } from '../types';

/** How often the sidebar asks again while the console is open (an agent may register at any time). */
const REFRESH_MS = 10_000;

/**
 * The number of devices waiting for acceptance, beside Devices in the sidebar: read from GET /api/stats when the
 * namespace or the page changes, and every few seconds; nothing is drawn while none waits.
 */
export function PendingBadge() {
  const api = useApi();
  const user = useUser();
  const { pathname } = useLocation();
  const [count, setCount] = useState(0);
  useEffect(() => {
    let stopped = false;
    const load = () =>
      api.call<Stats>(calls.stats).then(
        (stats) => {
          if (!stopped) setCount(stats.pending_devices ?? 0);
        },
        () => undefined,
      );
    void load();
    const timer = window.setInterval(load, REFRESH_MS);
    return () => {
      stopped = true;
      window.clearInterval(timer);
    };
  }, [api, user.tenant, pathname]);
  if (!count) return null;
  return (
    <span className="nav-badge" data-testid="pending-count">
      {count}
      <span className="sr-only"> waiting for acceptance</span>
    </span>
  );
}
