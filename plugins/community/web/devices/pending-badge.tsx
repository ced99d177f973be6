import { useApi, useLocation, useUser } from '@gatehouse/console';
import { useCallback, useEffect, useState } from 'react';
import { calls } from '../api';
import { useLiveRefresh } from '../live';
import type { Stats } from '../types';

/**
 * The number of devices waiting for acceptance, beside Devices in the sidebar: read from GET /api/stats when the
 * namespace or the page changes, and when the event stream tells of a device's status; nothing is drawn while none
 * waits.
 */
export function PendingBadge() {
  const api = useApi();
  const user = useUser();
  const { pathname } = useLocation();
  const [count, setCount] = useState(0);
  const [generation, setGeneration] = useState(0);
  const again = useCallback(() => setGeneration((g) => g + 1), []);
  useLiveRefresh(again, (e) => e.kind === 'device.status');
  useEffect(() => {
    let stopped = false;
    api.call<Stats>(calls.stats).then(
      (stats) => {
        if (!stopped) setCount(stats.pending_devices ?? 0);
      },
      () => undefined,
    );
    return () => {
      stopped = true;
    };
  }, [api, user.tenant, pathname, generation]);
  if (!count) return null;
  return (
    <span className="nav-badge" data-testid="pending-count">
      {count}
      <span className="sr-only"> waiting for acceptance</span>
    </span>
  );
}
