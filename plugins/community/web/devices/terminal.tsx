import '@xterm/xterm/css/xterm.css';
import {
  Alert,
  Button,
  type Device,
  ErrorState,
  icons,
  Link,
  Loading,
  PageHeader,
  TextField,
  useApi,
  useResource,
  useUser,
} from '@gatehouse/web/shell';
import { FitAddon } from '@xterm/addon-fit';
import { Terminal } from '@xterm/xterm';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { sshTarget } from './ssh-command';

// The web terminal: xterm.js over a WebSocket to the gateway (GET /ws/ssh). Text frames are JSON control
// messages ({type:'auth'|'resize'} from us; {type:'error'|'exit', message} from the gateway); binary frames
// carry the terminal's bytes both ways.

type Phase = 'form' | 'connecting' | 'open' | 'closed';

interface ControlFrame {
  type: string;
  message?: string;
  code?: number;
}

export function terminalSocketUrl(
  token: string,
  target: string,
  cols: number,
  rows: number,
  base = window.location,
): string {
  const scheme = base.protocol === 'https:' ? 'wss:' : 'ws:';
  const query = new URLSearchParams({ token, target, cols: String(cols), rows: String(rows) });
  return `${scheme}//${base.host}/ws/ssh?${query.toString()}`;
}

export const terminalTheme = {
  background: '#0b0e13',
  foreground: '#e6ebf2',
  cursor: '#9fb0ff',
  selectionBackground: '#35425a',
};

function TerminalSession({
  device,
  username,
  password,
  onClosed,
}: {
  device: Device;
  username: string;
  password: string;
  onClosed: (reason: string) => void;
}) {
  const user = useUser();
  const host = useRef<HTMLDivElement>(null);
  const [phase, setPhase] = useState<Phase>('connecting');
  const closedRef = useRef(onClosed);
  closedRef.current = onClosed;

  useEffect(() => {
    const element = host.current;
    if (!element) return;
    const term = new Terminal({
      cursorBlink: true,
      fontFamily: 'ui-monospace, "SFMono-Regular", "JetBrains Mono", Menlo, Consolas, monospace',
      fontSize: 14,
      theme: terminalTheme,
      screenReaderMode: false,
    });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(element);
    fit.fit();
    const socket = new WebSocket(
      terminalSocketUrl(user.token, sshTarget(device, username), term.cols, term.rows),
    );
    socket.binaryType = 'arraybuffer';
    const encoder = new TextEncoder();
    let reason = 'The connection closed.';

    const sendControl = (frame: object) => {
      if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(frame));
    };
    socket.addEventListener('open', () => {
      sendControl({ type: 'auth', password });
      sendControl({ type: 'resize', cols: term.cols, rows: term.rows });
      setPhase('open');
      term.focus();
    });
    socket.addEventListener('message', (event: MessageEvent<ArrayBuffer | string>) => {
      if (typeof event.data === 'string') {
        let frame: ControlFrame;
        try {
          frame = JSON.parse(event.data) as ControlFrame;
        } catch {
          term.write(event.data);
          return;
        }
        if (frame.type === 'error') reason = frame.message ?? 'The gateway refused the connection.';
        if (frame.type === 'exit')
          reason = `The session ended${frame.code !== undefined ? ` (exit status ${frame.code})` : ''}.`;
        return;
      }
      term.write(new Uint8Array(event.data));
    });
    socket.addEventListener('close', (event) => {
      if (event.reason) reason = event.reason;
      setPhase('closed');
      closedRef.current(reason);
    });
    const input = term.onData((data) => {
      if (socket.readyState === WebSocket.OPEN) socket.send(encoder.encode(data));
    });
    const resized = term.onResize(({ cols, rows }) => sendControl({ type: 'resize', cols, rows }));
    // Ctrl+Shift+C copies the selection; Ctrl+Shift+V is left to the browser, which pastes into xterm.
    term.attachCustomKeyEventHandler((event) => {
      if (event.type === 'keydown' && event.ctrlKey && event.shiftKey && event.code === 'KeyC') {
        const selection = term.getSelection();
        if (selection) void navigator.clipboard?.writeText(selection);
        return false;
      }
      return true;
    });
    const observer = new ResizeObserver(() => {
      try {
        fit.fit();
      } catch {
        // fit() throws while the element is detached during unmount; nothing to resize then.
      }
    });
    observer.observe(element);
    (element as HTMLDivElement & { gatehouseTerminal?: Terminal }).gatehouseTerminal = term;
    return () => {
      observer.disconnect();
      input.dispose();
      resized.dispose();
      socket.close();
      term.dispose();
    };
  }, [device, username, password, user.token]);

  return (
    <div className="stack" style={{ gap: 8 }}>
      <div className="row muted" style={{ fontSize: 13 }} role="status">
        {phase === 'connecting' ? (
          <>
            <span className="spinner" aria-hidden="true" /> Connecting to {device.name}…
          </>
        ) : phase === 'open' ? (
          <>
            <span className="dot dot-online" aria-hidden="true" /> Connected as {username}. Copy with
            Ctrl+Shift+C, paste with Ctrl+Shift+V.
          </>
        ) : null}
      </div>
      <div
        className="terminal-shell"
        ref={host}
        data-testid="terminal"
        role="application"
        aria-label={`Terminal on ${device.name}`}
      />
    </div>
  );
}

export function TerminalPage({ params }: { params: Record<string, string> }) {
  const api = useApi();
  const uid = params.uid ?? '';
  const device = useResource(
    () => api.call<Device>('getDevice', { params: { uid }, context: 'Could not load the device' }),
    [api, uid],
  );
  const [username, setUsername] = useState('root');
  const [password, setPassword] = useState('');
  const [session, setSession] = useState<{ username: string; password: string; id: number } | null>(null);
  const [closed, setClosed] = useState<string | null>(null);

  if (device.error) return <ErrorState message={device.error} onRetry={device.reload} />;
  if (!device.data) return <Loading />;
  const d = device.data;

  const connect = (event?: FormEvent) => {
    event?.preventDefault();
    setClosed(null);
    setSession({ username, password, id: Date.now() });
  };

  return (
    <>
      <PageHeader
        title={`Terminal · ${d.name}`}
        description={<Link to={`/device/${d.uid}`}>← Back to {d.name}</Link>}
        actions={
          session && !closed ? (
            <Button
              onClick={() => {
                setSession(null);
                setClosed('You disconnected.');
              }}
            >
              Disconnect
            </Button>
          ) : null
        }
      />
      {!d.online ? (
        <Alert kind="warn" title="Device offline">
          {d.name} is not connected right now. The terminal can open once its agent is back.
        </Alert>
      ) : null}
      {closed ? (
        <div style={{ marginBottom: 14 }}>
          <Alert kind="info" title="Disconnected">
            <div className="row" style={{ justifyContent: 'space-between' }}>
              <span>{closed}</span>
              <Button size="sm" variant="primary" onClick={() => connect()}>
                Reconnect
              </Button>
            </div>
          </Alert>
        </div>
      ) : null}
      {session ? (
        <TerminalSession
          key={session.id}
          device={d}
          username={session.username}
          password={session.password}
          onClosed={setClosed}
        />
      ) : null}
      {!session && !closed ? (
        <div className="card" style={{ maxWidth: 440 }}>
          <form className="card-body form" onSubmit={connect}>
            <h2>Sign in to {d.name}</h2>
            <p className="muted">
              Use an account that exists on the device. The password goes to the device through the gateway
              and is not stored.
            </p>
            <TextField
              label="Device user"
              value={username}
              onChange={(e) => setUsername(e.target.value)}
              required
              autoComplete="off"
            />
            <TextField
              label="Password"
              type="password"
              value={password}
              onChange={(e) => setPassword(e.target.value)}
              autoComplete="off"
            />
            <Button type="submit" variant="primary" disabled={!d.online}>
              {icons.terminal} Connect
            </Button>
          </form>
        </div>
      ) : null}
    </>
  );
}
