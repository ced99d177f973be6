import { useCallback } from 'react';
import type { Call } from './api/calls';
import { type Permission, permissionFor } from './permission-table';
import { useConsole } from './session';

/**
 * `can(call)`: whether the signed-in person's role may make `call`. `what` words the action for the reason
 * ("accept devices"); without it the server's summary of the call is used.
 */
export function useCan(): (call: Call, what?: string) => Permission {
  const { info, user } = useConsole();
  const table = info.permissions;
  const role = user?.role;
  return useCallback((call: Call, what?: string) => permissionFor(table, role, call, what), [table, role]);
}
