import '@xterm/xterm/css/xterm.css';
import {
  Alert,
  Button,
  type Device,
  ErrorState,
  errorText,
  icons,
  Link,
  Loading,
  PageHeader,
  TextField,
  useApi,
  useResource,
} from '@gatehouse/web/shell';
import { FitAddon } from '@xterm/addon-fit';
import { Terminal } from '@xterm/xterm';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { containerKind, type DeviceKind, deviceKind } from './kind';
import { sshTarget } from './ssh-command';

// The web terminal: xterm.js over a WebSocket to the gateway (GET /ws/ssh?ticket=&cols=&rows=, see
// plugins/community/gateway/web-terminal.ts). The ticket comes from POST /api/terminal/tickets just before the
// socket opens, so the sign-in token never goes in a URL. Text frames are JSON control messages: {type:'auth', password} and
// {type:'resize', cols, rows} from us; {type:'error', message} and {type:'exit', code} from the gateway, each
// sent just before it closes. Binary frames carry the terminal's bytes both ways. The gateway sends terminal
// bytes only once the device accepted the password and opened the shell, so the first one means "signed in".

type Phase = 'connecting' | 'signing-in' | 'open' | 'closed';

interface ControlFrame {
  type: string;
  message?: string;
  code?: number;
}

/** What the person reads when the terminal closes: the gateway's own reason first, else what the close says. */
export function closeReason(
  frame: ControlFrame | undefined,
  close: { code: number; reason: string },
  opened: boolean,
): string {
  if (frame?.type === 'error' && frame.message) return sentence(frame.message);
  if (frame?.type === 'exit')
    return `The session ended${typeof frame.code === 'number' ? ` (exit status ${frame.code})` : ''}.`;
  // The browser hides the answer to a refused upgrade (401 for an expired sign-in, 403 for a namespace the
  // person left): all it reports is 1006 before the socket ever opened.
  if (!opened)
    return 'The gateway refused the connection or could not be reached. If your sign-in has expired, sign in again.';
  if (close.code === 1000) return 'The session ended.';
  return 'The connection to the gateway was lost.';
}

function sentence(text: string): string {
  const t = text.trim();
  const capital = t.charAt(0).toUpperCase() + t.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}

export function terminalSocketUrl(
  ticket: string,
  cols: number,
  rows: number,
  base = window.location,
): string {
  const scheme = base.protocol === 'https:' ? 'wss:' : 'ws:';
  const query = new URLSearchParams({ ticket, cols: String(cols), rows: String(rows) });
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
  const api = useApi();
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
    const encoder = new TextEncoder();
    let socket: WebSocket | undefined;
    let opened = false;
    let disposed = false;
    let last: ControlFrame | undefined;

    const finish = (reason: string) => {
      // The output stays readable and selectable; typing into a closed session would go nowhere.
      term.options.disableStdin = true;
      term.options.cursorBlink = false;
      term.write('\x1b[?25l');
      setPhase('closed');
      closedRef.current(reason);
    };
    const sendControl = (frame: object) => {
      if (socket?.readyState === WebSocket.OPEN) socket.send(JSON.stringify(frame));
    };
    const start = async () => {
      let ticket: string;
      try {
        ({ ticket } = await api.call<{ ticket: string }>('terminalTicket', {
          body: { target: sshTarget(device, username) },
          context: 'Could not open the terminal',
        }));
      } catch (err) {
        if (!disposed) finish(errorText(err));
        return;
      }
      if (disposed) return;
      const ws = new WebSocket(terminalSocketUrl(ticket, term.cols, term.rows));
      socket = ws;
      ws.binaryType = 'arraybuffer';
      ws.addEventListener('open', () => {
        opened = true;
        sendControl({ type: 'auth', password });
        sendControl({ type: 'resize', cols: term.cols, rows: term.rows });
        setPhase('signing-in');
        term.focus();
      });
      let signedIn = false;
      ws.addEventListener('message', (event: MessageEvent<ArrayBuffer | string>) => {
        if (typeof event.data === 'string') {
          try {
            last = JSON.parse(event.data) as ControlFrame;
          } catch {
            term.write(event.data);
          }
          return;
        }
        if (!signedIn) {
          signedIn = true;
          setPhase('open');
        }
        term.write(new Uint8Array(event.data));
      });
      ws.addEventListener('close', (event) => {
        // Closing it ourselves (Disconnect, leaving the page) is not news to report.
        if (!disposed) finish(closeReason(last, event, opened));
      });
    };
    void start();
    const input = term.onData((data) => {
      if (socket?.readyState === WebSocket.OPEN) socket.send(encoder.encode(data));
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
      disposed = true;
      socket?.close();
      term.dispose();
    };
  }, [api, device, username, password]);

  return (
    <div className="stack" style={{ gap: 8 }}>
      <div className="row muted" style={{ fontSize: 13 }} role="status">
        {phase === 'connecting' || phase === 'signing-in' ? (
          <>
            <span className="spinner" aria-hidden="true" />{' '}
            {phase === 'connecting' ? `Connecting to ${device.name}…` : `Signing in as ${username}…`}
          </>
        ) : phase === 'open' ? (
          <>
            <span className="dot dot-online" aria-hidden="true" /> Connected as {username}. Copy with
            Ctrl+Shift+C, paste with Ctrl+Shift+V.
          </>
        ) : null}
      </div>
      {/* xterm's fit add-on sizes to its parent's height with the padding in it, so the padding stays outside. */}
      <div className="terminal-shell">
        <div
          className="terminal-host"
          ref={host}
          data-testid="terminal"
          role="application"
          aria-label={`Terminal on ${device.name}`}
        />
      </div>
    </div>
  );
}

function TerminalScreen({ kind, uid }: { kind: DeviceKind; uid: string }) {
  const api = useApi();
  const device = useResource(
    () => api.call<Device>(kind.calls.get, { params: { uid }, context: `Could not load the ${kind.noun}` }),
    [api, kind, uid],
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
        description={<Link to={kind.detailsPath(d.uid)}>← Back to {d.name}</Link>}
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
        <Alert kind="warn" title="Offline">
          {d.name} is not connected right now. The terminal can open once its agent is back.
        </Alert>
      ) : null}
      {closed ? (
        <div style={{ marginBottom: 14 }}>
          <Alert kind="info" title="Disconnected">
            <div className="row" style={{ justifyContent: 'space-between' }}>
              <span>{closed}</span>
              <span className="row" style={{ gap: 8 }}>
                <Button
                  size="sm"
                  onClick={() => {
                    setSession(null);
                    setClosed(null);
                  }}
                >
                  Change user or password
                </Button>
                <Button size="sm" variant="primary" onClick={() => connect()}>
                  Reconnect
                </Button>
              </span>
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

export function TerminalPage({ params }: { params: Record<string, string> }) {
  return <TerminalScreen kind={deviceKind} uid={params.uid ?? ''} />;
}

export function ContainerTerminalPage({ params }: { params: Record<string, string> }) {
  return <TerminalScreen kind={containerKind} uid={params.uid ?? ''} />;
}
