import '@xterm/xterm/css/xterm.css';
import { Alert, ApiError, Button, Card, useApi } from '@gatehouse/console';
import { Terminal } from '@xterm/xterm';
import { useEffect, useRef, useState } from 'react';
import { calls } from '../api';
import { loadTerminalFont, TERMINAL_FONT } from '../devices/terminal-font';

/** A message of the live stream (`GET /api/sessions/{uid}/live`). */
interface LiveMessage {
  type: 'out' | 'size' | 'watchers' | 'end';
  data?: string;
  width?: number;
  height?: number;
  names?: string[];
  reason?: 'revoked' | 'expired' | 'behind';
}

type WatchState =
  | { phase: 'idle' }
  | { phase: 'connecting' }
  | { phase: 'watching'; names: string[] }
  | { phase: 'ended' }
  | { phase: 'failed'; message: string };

function bytesOf(base64: string): Uint8Array {
  const text = atob(base64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

/** Reads Server-Sent Events from `response` and hands each `data` line's JSON to `heard`, until it ends. */
async function readMessages(response: Response, heard: (message: LiveMessage) => void): Promise<void> {
  if (!response.body) return;
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const data = /^data: (.*)$/m.exec(buffer.slice(0, end))?.[1];
      buffer = buffer.slice(end + 2);
      if (!data) continue;
      try {
        heard(JSON.parse(data) as LiveMessage);
      } catch {
        // A frame that is not JSON is skipped.
      }
    }
  }
}

/**
 * An active, recorded session's terminal as it happens: the recording so far, then the output as it passes. On a
 * member's session page only on request (`autoStart` off), since the person in the session is told who watches;
 * through a share link at once, the link being for that. `onEnded` runs when the session ends.
 */
export function LiveTerminal({
  call = calls.watchSession,
  params,
  seat,
  onEnded,
  autoStart = false,
  endedNote = 'Its last screen is below; play its recording from the start in the Recording card.',
}: {
  call?: typeof calls.watchSession | typeof calls.watchShare;
  params: Record<string, string>;
  seat: number;
  onEnded: () => void;
  autoStart?: boolean;
  /** Said under "The session ended", above its last screen. */
  endedNote?: string;
}) {
  const api = useApi();
  const host = useRef<HTMLElement>(null);
  const [state, setState] = useState<WatchState>({ phase: 'idle' });
  const [attempt, setAttempt] = useState(autoStart ? 1 : 0);
  const key = JSON.stringify(params);
  const onEndedRef = useRef(onEnded);
  onEndedRef.current = onEnded;
  const watching = attempt > 0;

  useEffect(() => {
    const element = host.current;
    if (!watching || !element) return;
    const abort = new AbortController();
    const term = new Terminal({
      cols: 80,
      rows: 24,
      disableStdin: true,
      fontSize: 13,
      fontFamily: TERMINAL_FONT,
      theme: { background: '#0b0e13', foreground: '#e6ebf2' },
    });
    setState({ phase: 'connecting' });
    const run = async () => {
      await loadTerminalFont(13);
      if (abort.signal.aborted) return;
      term.open(element);
      const response = await api.stream(call, abort.signal, {
        params: JSON.parse(key) as Record<string, string>,
        query: { seat },
        context: 'Could not watch the session',
      });
      setState({ phase: 'watching', names: [] });
      let ended = false;
      let reason: string | undefined;
      await readMessages(response, (message) => {
        if (message.type === 'out' || message.type === 'size') {
          const { width, height } = message;
          if (width && height && (width !== term.cols || height !== term.rows)) term.resize(width, height);
          if (message.type === 'out' && message.data) term.write(bytesOf(message.data));
        } else if (message.type === 'watchers') {
          setState({ phase: 'watching', names: Array.isArray(message.names) ? message.names : [] });
        } else if (message.type === 'end') {
          ended = true;
          reason = message.reason;
        }
      });
      if (abort.signal.aborted) return;
      if (reason === 'revoked') setState({ phase: 'failed', message: 'The share link was revoked.' });
      else if (reason === 'expired') setState({ phase: 'failed', message: 'The share link has expired.' });
      else if (reason === 'behind')
        setState({ phase: 'failed', message: 'The live view fell behind the session on this connection.' });
      else if (ended) {
        setState({ phase: 'ended' });
        onEndedRef.current();
      } else setState({ phase: 'failed', message: 'The live view was cut off.' });
    };
    run().catch((error: unknown) => {
      if (abort.signal.aborted) return;
      setState({
        phase: 'failed',
        message:
          error instanceof ApiError || error instanceof Error ? error.message : 'Could not watch the session',
      });
    });
    return () => {
      abort.abort();
      term.dispose();
    };
  }, [api, call, key, seat, watching, attempt]);

  const stop = () => {
    setAttempt(0);
    setState({ phase: 'idle' });
  };
  return (
    <Card
      title="Live terminal"
      actions={
        state.phase === 'watching' || state.phase === 'connecting' ? (
          <Button onClick={stop}>Stop watching</Button>
        ) : state.phase !== 'ended' ? (
          <Button variant="primary" onClick={() => setAttempt((n) => n + 1)}>
            {state.phase === 'failed' ? 'Watch again' : 'Watch live'}
          </Button>
        ) : null
      }
    >
      <div className="card-body stack">
        {state.phase === 'idle' ? (
          <p className="muted">
            See this session's terminal as it happens, from its start. The person in the session sees a line
            saying that you are watching, and another when you stop.
          </p>
        ) : null}
        {state.phase === 'connecting' ? (
          <p className="muted" role="status">
            Joining the session…
          </p>
        ) : null}
        {state.phase === 'watching' ? (
          <p role="status" data-testid="watchers">
            <span className="badge badge-ok">
              <span className="dot dot-online" aria-hidden="true" /> Live
            </span>{' '}
            Watching: {state.names.length > 0 ? state.names.join(', ') : 'you'}
          </p>
        ) : null}
        {state.phase === 'ended' ? (
          <Alert kind="info" title="The session ended">
            {endedNote}
          </Alert>
        ) : null}
        {state.phase === 'failed' ? (
          <Alert kind="error" title="Not watching">
            {state.message}
          </Alert>
        ) : null}
        {watching ? (
          <section
            className="terminal-shell"
            style={{ height: 'auto', minHeight: 200, overflowX: 'auto' }}
            ref={host}
            data-testid="live-terminal"
            aria-label="Live terminal output"
          />
        ) : null}
      </div>
    </Card>
  );
}
