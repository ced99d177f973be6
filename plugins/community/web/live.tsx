import { useApi, useUser } from '@gatehouse/console';
import { useEffect, useRef, useState } from 'react';
import { calls } from './api';

/** One event of `GET /api/events` (docs/content/developers/event-stream.md). */
export interface LiveEvent {
  kind: string;
  device?: string;
  session?: string;
  status?: string;
  online?: boolean;
}

const listeners = new Set<(event: LiveEvent) => void>();
const upListeners = new Set<(up: boolean) => void>();
let streamUp = false;

function setUp(up: boolean): void {
  if (streamUp === up) return;
  streamUp = up;
  for (const l of upListeners) l(up);
}

const RECONNECTED = 'stream.reconnected';

function tell(event: LiveEvent): void {
  for (const l of listeners) l(event);
}

/** The first wait before connecting again, doubled after each failure up to the last. */
const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 30_000;
/** While the stream is down, screens still read again this often. */
const FALLBACK_MS = 30_000;

/**
 * Holds the console's one event stream while someone is signed in (drawn once, over every screen), and connects
 * again with back-off when it drops. Screens hear its events through `useLiveRefresh`.
 */
export function LiveEvents(): null {
  const api = useApi();
  const user = useUser();
  useEffect(() => {
    const abort = new AbortController();
    let delay = RETRY_FIRST_MS;
    let first = true;
    const run = async () => {
      while (!abort.signal.aborted) {
        try {
          const response = await api.stream(calls.events, abort.signal);
          setUp(true);
          delay = RETRY_FIRST_MS;
          // What changed while it was down was not heard: every screen reads again once.
          if (!first) tell({ kind: RECONNECTED });
          first = false;
          await read(response, abort.signal);
        } catch {
          // Down: screens fall back to reading on a timer until it is back.
        }
        setUp(false);
        if (abort.signal.aborted) return;
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, RETRY_MAX_MS);
      }
    };
    void run();
    return () => {
      abort.abort();
      setUp(false);
    };
  }, [api, user.tenant]);
  return null;
}

async function read(response: Response, signal: AbortSignal): Promise<void> {
  if (!response.body) return;
  const reader = response.body.getReader();
  signal.addEventListener('abort', () => void reader.cancel().catch(() => {}), { once: true });
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end = buffer.indexOf('\n\n');
    while (end >= 0) {
      const data = /^data: (.*)$/m.exec(buffer.slice(0, end))?.[1];
      buffer = buffer.slice(end + 2);
      if (data) {
        try {
          tell(JSON.parse(data) as LiveEvent);
        } catch {
          // A frame that is not JSON is skipped.
        }
      }
      end = buffer.indexOf('\n\n');
    }
  }
}

/**
 * Calls `reload` when an event `matches` (every event by default), at most once per short burst; while the stream
 * is down, every 30 seconds instead.
 */
export function useLiveRefresh(
  reload: () => void,
  matches: (event: LiveEvent) => boolean = () => true,
): void {
  const reloadRef = useRef(reload);
  reloadRef.current = reload;
  const matchRef = useRef(matches);
  matchRef.current = matches;
  const [up, setUpState] = useState(streamUp);
  useEffect(() => {
    let timer: number | undefined;
    const heard = (event: LiveEvent) => {
      if ((event.kind !== RECONNECTED && !matchRef.current(event)) || timer !== undefined) return;
      timer = window.setTimeout(() => {
        timer = undefined;
        reloadRef.current();
      }, 150);
    };
    listeners.add(heard);
    upListeners.add(setUpState);
    setUpState(streamUp);
    return () => {
      listeners.delete(heard);
      upListeners.delete(setUpState);
      if (timer !== undefined) window.clearTimeout(timer);
    };
  }, []);
  useEffect(() => {
    if (up) return;
    const timer = window.setInterval(() => reloadRef.current(), FALLBACK_MS);
    return () => window.clearInterval(timer);
  }, [up]);
}
