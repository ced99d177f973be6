import { useEffect } from 'react';
import type { Device } from '../types';

/**
 * Between Accept and its agent's tunnel, a device is "waiting for the agent" rather than offline:
 * the server tells the waiting agent at once and it connects within a few seconds. Past this window an accepted
 * device that is not online is plainly offline.
 */
export const WAITING_WINDOW_MS = 60_000;

/** When this console accepted each device: the browser's own clock, so a skewed server clock does not matter. */
const acceptedHere = new Map<string, number>();

export function noteAccepted(uid: string): void {
  acceptedHere.set(uid, Date.now());
}

export function waitingForAgent(device: Device, now = Date.now()): boolean {
  if (device.status !== 'accepted' || device.online) return false;
  const since = acceptedHere.get(device.uid) ?? Date.parse(device.status_update_at ?? '');
  return Number.isFinite(since) && now - since < WAITING_WINDOW_MS;
}

/** Loads again every second while `waiting`, so "Waiting for the agent" turns "Online" without a reload. */
export function useRefreshWhileWaiting(waiting: boolean, reload: () => void): void {
  useEffect(() => {
    if (!waiting) return;
    const timer = setInterval(reload, 1000);
    return () => clearInterval(timer);
  }, [waiting, reload]);
}
