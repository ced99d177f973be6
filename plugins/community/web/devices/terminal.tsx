import '@xterm/xterm/css/xterm.css';
import {
  Alert,
  Button,
  ErrorState,
  errorText,
  icons,
  Link,
  Loading,
  PageHeader,
  TextField,
  useApi,
  useResource,
} from '@gatehouse/console';
import { FitAddon } from '@xterm/addon-fit';
import { Terminal } from '@xterm/xterm';
import { type ChangeEvent, type FormEvent, useEffect, useId, useRef, useState } from 'react';
import { calls } from '../api';
import type { Device } from '../types';
import { containerKind, type DeviceKind, deviceKind } from './kind';
import { sshTarget } from './ssh-command';
import { answerChallenge, inspectKeyFile, type KeyFile, type LoadedKey, loadPrivateKey } from './ssh-key';
import { loadTerminalFont, TERMINAL_FONT } from './terminal-font';

// The web terminal: xterm.js over a WebSocket to the gateway (GET /ws/ssh?ticket=&cols=&rows=, see
// plugins/community/gateway/web-terminal.ts). The ticket comes from POST /api/terminal/tickets just before the
// socket opens, so the sign-in token never goes in a URL. Text frames are JSON control messages: from us
// {type:'auth', password} or {type:'auth', method:'publickey', key}, {type:'signature', signature} and
// {type:'resize', cols, rows}; from the gateway {type:'challenge', nonce} (a key sign-in), and {type:'error',
// message} or {type:'exit', code}, each sent just before it closes. Binary frames carry the terminal's bytes both
// ways. The gateway sends terminal bytes only once the device accepted the sign-in and opened the shell, so the
// first one means "signed in".
//
// Keyboard: Tab goes to the shell (completion). To leave the terminal with the keyboard, press Esc and then Tab
// (Shift+Tab backwards), as in code editors that keep Tab; the Esc still reaches the shell.

type Phase = 'connecting' | 'signing-in' | 'open' | 'closed';

interface ControlFrame {
  type: string;
  message?: string;
  code?: number;
  nonce?: string;
}

/** How the person signs in to the device: the device password, or a private key that stays in this browser. */
export type Credential = { kind: 'password'; password: string } | { kind: 'key'; key: LoadedKey };

/** What the person reads when the terminal closes: the gateway's own reason first, else what the close says. */
export function closeReason(
  frame: ControlFrame | undefined,
  close: { code: number; reason: string },
  opened: boolean,
): string {
  if (frame?.type === 'error' && frame.message) return sentence(frame.message);
  if (frame?.type === 'exit')
    return `The session ended${typeof frame.code === 'number' ? ` (exit status ${frame.code})` : ''}.`;
  // The browser hides the answer to a refused upgrade (401 for an expired ticket or sign-in, 403 for a namespace
  // the person left): all it reports is 1006 before the socket ever opened.
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

/** The next (or, backwards, previous) element Tab would reach from `from`, for leaving the terminal. */
function focusNeighbour(from: HTMLElement, backwards: boolean): void {
  const all = [
    ...document.querySelectorAll<HTMLElement>(
      'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])',
    ),
  ].filter((el) => el.offsetParent !== null || el === document.activeElement);
  const inside = (el: Element) => from.contains(el);
  const index = all.findIndex((el) => inside(el));
  if (index === -1) return;
  // Past the last element it goes round to the first, so the keys never leave focus stuck in the terminal.
  const step = backwards ? -1 : 1;
  for (let n = 1; n < all.length; n++) {
    const el = all[(index + step * n + all.length * n) % all.length];
    if (el && !inside(el)) {
      el.focus();
      return;
    }
  }
}

function TerminalSession({
  device,
  username,
  credential,
  onRefused,
  onEnded,
}: {
  device: Device;
  username: string;
  credential: Credential;
  /** The session closed before it signed in: nothing to show but the reason. */
  onRefused: (reason: string) => void;
  /** The session signed in and has ended; its output stays on screen. */
  onEnded: (reason: string) => void;
}) {
  const api = useApi();
  const host = useRef<HTMLDivElement>(null);
  const shell = useRef<HTMLDivElement>(null);
  const [phase, setPhase] = useState<Phase>('connecting');
  const callbacks = useRef({ onRefused, onEnded });
  callbacks.current = { onRefused, onEnded };
  const helpId = useId();
  // Focus once the terminal is shown: while the sign-in is pending it is hidden and cannot take focus.
  useEffect(() => {
    if (phase !== 'open') return;
    (host.current as (HTMLDivElement & { gatehouseTerminal?: Terminal }) | null)?.gatehouseTerminal?.focus();
  }, [phase]);

  useEffect(() => {
    const element = host.current;
    if (!element) return;
    const term = new Terminal({
      cursorBlink: true,
      fontFamily: TERMINAL_FONT,
      fontSize: 14,
      theme: terminalTheme,
      screenReaderMode: false,
    });
    const fit = new FitAddon();
    term.loadAddon(fit);
    const encoder = new TextEncoder();
    let socket: WebSocket | undefined;
    let opened = false;
    let signedIn = false;
    let disposed = false;
    let last: ControlFrame | undefined;

    const finish = (reason: string) => {
      if (!signedIn) {
        callbacks.current.onRefused(reason);
        return;
      }
      // The output stays readable and selectable; typing into a closed session would go nowhere.
      term.options.disableStdin = true;
      term.options.cursorBlink = false;
      term.write('\x1b[?25l');
      setPhase('closed');
      callbacks.current.onEnded(reason);
    };
    const sendControl = (frame: object) => {
      if (socket?.readyState === WebSocket.OPEN) socket.send(JSON.stringify(frame));
    };
    const start = async () => {
      await loadTerminalFont(14);
      if (disposed) return;
      term.open(element);
      fit.fit();
      let ticket: string;
      try {
        ({ ticket } = await api.call<{ ticket: string }>(calls.terminalTicket, {
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
        sendControl(
          credential.kind === 'password'
            ? { type: 'auth', password: credential.password }
            : { type: 'auth', method: 'publickey', key: credential.key.publicKey },
        );
        sendControl({ type: 'resize', cols: term.cols, rows: term.rows });
        setPhase('signing-in');
      });
      ws.addEventListener('message', (event: MessageEvent<ArrayBuffer | string>) => {
        if (typeof event.data === 'string') {
          let frame: ControlFrame;
          try {
            frame = JSON.parse(event.data) as ControlFrame;
          } catch {
            return;
          }
          if (frame.type === 'challenge' && credential.kind === 'key' && frame.nonce) {
            answerChallenge(credential.key, frame.nonce).then(
              (signature) => sendControl({ type: 'signature', signature }),
              () => ws.close(),
            );
            return;
          }
          last = frame;
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
    // Esc then Tab leaves the terminal (Tab alone completes in the shell). Ctrl+Shift+C copies the selection;
    // Ctrl+Shift+V is left to the browser, which pastes into xterm.
    let escaped = false;
    term.attachCustomKeyEventHandler((event) => {
      if (event.type !== 'keydown') return true;
      if (event.key === 'Tab' && escaped && !event.ctrlKey && !event.altKey && !event.metaKey) {
        escaped = false;
        event.preventDefault();
        if (shell.current) focusNeighbour(shell.current, event.shiftKey);
        return false;
      }
      if (!['Shift', 'Control', 'Alt', 'Meta'].includes(event.key)) escaped = event.key === 'Escape';
      if (event.ctrlKey && event.shiftKey && event.code === 'KeyC') {
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
  }, [api, device, username, credential]);

  const pending = phase === 'connecting' || phase === 'signing-in';
  return (
    <div className="stack" style={{ gap: 8 }}>
      <div className="row muted" style={{ fontSize: 13 }} role="status">
        {phase === 'open' ? (
          <>
            <span className="dot dot-online" aria-hidden="true" /> Connected as {username}. Copy with
            Ctrl+Shift+C, paste with Ctrl+Shift+V.
          </>
        ) : null}
      </div>
      <p className="muted" id={helpId} style={{ fontSize: 13, margin: 0 }}>
        Tab completes in the shell. To leave the terminal with the keyboard, press <kbd>Esc</kbd> then{' '}
        <kbd>Tab</kbd> (<kbd>Shift</kbd>+<kbd>Tab</kbd> to go back).
      </p>
      {/* xterm's fit add-on sizes to its parent's height with the padding in it, so the padding stays outside. */}
      <div className="terminal-shell" ref={shell} data-state={pending ? 'pending' : phase}>
        {pending ? (
          <div className="terminal-pending" role="status">
            <span className="spinner" aria-hidden="true" />{' '}
            {phase === 'connecting' ? `Connecting to ${device.name}…` : `Signing in as ${username}…`}
          </div>
        ) : null}
        <div
          className="terminal-host"
          ref={host}
          data-testid="terminal"
          role="application"
          aria-label={`Terminal on ${device.name}`}
          aria-describedby={helpId}
        />
      </div>
    </div>
  );
}

/** The private key part of the sign-in form: a file read here, its passphrase, never sent anywhere. */
function KeyFields({
  file,
  error,
  passphrase,
  onFile,
  onPassphrase,
}: {
  file: KeyFile | null;
  error: string | null;
  passphrase: string;
  onFile: (file: KeyFile | null, error: string | null) => void;
  onPassphrase: (value: string) => void;
}) {
  const inputId = useId();
  const read = async (event: ChangeEvent<HTMLInputElement>) => {
    const chosen = event.target.files?.[0];
    if (!chosen) return onFile(null, null);
    if (chosen.size > 64 * 1024) return onFile(null, 'This file is too large to be a private key.');
    try {
      onFile(await inspectKeyFile(await chosen.text()), null);
    } catch (err) {
      onFile(null, err instanceof Error ? err.message : String(err));
    }
  };
  return (
    <>
      <div className="field">
        <label htmlFor={inputId}>Private key file</label>
        <input
          id={inputId}
          className="input"
          type="file"
          onChange={(e) => void read(e)}
          aria-describedby={`${inputId}-hint${error ? ` ${inputId}-error` : ''}`}
          aria-invalid={error ? true : undefined}
        />
        <span className="hint" id={`${inputId}-hint`}>
          {file
            ? `${file.type} key ${file.fingerprint}${file.encrypted ? ', protected by a passphrase' : ''}.`
            : 'An OpenSSH private key, e.g. ~/.ssh/id_ed25519. It is read in this browser and never uploaded: the gateway sends a one-time challenge, the browser signs it, and only the signature is sent.'}
        </span>
        {error ? (
          <span className="error" id={`${inputId}-error`} role="alert">
            {error}
          </span>
        ) : null}
      </div>
      {file?.encrypted ? (
        <TextField
          label="Key passphrase"
          type="password"
          value={passphrase}
          onChange={(e) => onPassphrase(e.target.value)}
          autoComplete="off"
        />
      ) : null}
    </>
  );
}

function TerminalScreen({ kind, uid }: { kind: DeviceKind; uid: string }) {
  const api = useApi();
  const device = useResource(
    () => api.call<Device>(kind.calls.get, { params: { uid }, context: `Could not load the ${kind.noun}` }),
    [api, kind, uid],
  );
  const [username, setUsername] = useState('root');
  const [method, setMethod] = useState<'password' | 'key'>('password');
  const [password, setPassword] = useState('');
  const [keyFile, setKeyFile] = useState<KeyFile | null>(null);
  const [keyError, setKeyError] = useState<string | null>(null);
  const [passphrase, setPassphrase] = useState('');
  const [opening, setOpening] = useState(false);
  const [session, setSession] = useState<{ username: string; credential: Credential; id: number } | null>(
    null,
  );
  const [refused, setRefused] = useState<string | null>(null);
  const [ended, setEnded] = useState<string | null>(null);
  const methodName = useId();
  const lastSignIn = useRef<{ username: string; credential: Credential } | null>(null);

  if (device.error) return <ErrorState message={device.error} onRetry={device.reload} />;
  if (!device.data) return <Loading />;
  const d = device.data;

  const open = (credential: Credential, user = username) => {
    lastSignIn.current = { username: user, credential };
    setRefused(null);
    setEnded(null);
    setSession({ username: user, credential, id: Date.now() });
  };
  const connect = async (event?: FormEvent) => {
    event?.preventDefault();
    if (method === 'password') return open({ kind: 'password', password });
    if (!keyFile) return setKeyError('Choose your private key file first.');
    setOpening(true);
    try {
      // Decrypted once per sign-in form; the CryptoKey cannot be read back out, and nothing is stored.
      open({ kind: 'key', key: await loadPrivateKey(keyFile.text, passphrase) });
    } catch (err) {
      setKeyError(err instanceof Error ? err.message : String(err));
    } finally {
      setOpening(false);
    }
  };

  return (
    <>
      <PageHeader
        title={`Terminal · ${d.name}`}
        description={<Link to={kind.detailsPath(d.uid)}>← Back to {d.name}</Link>}
        actions={
          session && !ended ? (
            <Button
              onClick={() => {
                setSession(null);
                setEnded('You disconnected.');
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
      {ended ? (
        <div style={{ marginBottom: 14 }}>
          <Alert kind="info" title="Disconnected">
            <div className="row" style={{ justifyContent: 'space-between' }}>
              <span>{ended}</span>
              <span className="row" style={{ gap: 8 }}>
                <Button
                  size="sm"
                  onClick={() => {
                    setSession(null);
                    setEnded(null);
                  }}
                >
                  Change user or sign-in
                </Button>
                <Button
                  size="sm"
                  variant="primary"
                  onClick={() => {
                    const last = lastSignIn.current;
                    if (last) open(last.credential, last.username);
                  }}
                >
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
          credential={session.credential}
          onRefused={(reason) => {
            setSession(null);
            setRefused(reason);
          }}
          onEnded={setEnded}
        />
      ) : null}
      {!session ? (
        <div className="card" style={{ maxWidth: 480 }}>
          <form className="card-body form" onSubmit={(e) => void connect(e)}>
            <h2>Sign in to {d.name}</h2>
            {refused ? (
              <Alert kind="error" title="Not signed in">
                {refused}
              </Alert>
            ) : null}
            <p className="muted">
              Use an account that exists on the device. Nothing you enter here is stored; a password goes to
              the device through the gateway, a private key never leaves this browser.
            </p>
            <TextField
              label="Device user"
              value={username}
              onChange={(e) => setUsername(e.target.value)}
              required
              autoComplete="off"
            />
            <fieldset className="choice">
              <legend>Sign in with</legend>
              <label>
                <input
                  type="radio"
                  name={methodName}
                  checked={method === 'password'}
                  onChange={() => setMethod('password')}
                />{' '}
                Password
              </label>
              <label>
                <input
                  type="radio"
                  name={methodName}
                  checked={method === 'key'}
                  onChange={() => setMethod('key')}
                />{' '}
                Private key
              </label>
            </fieldset>
            {method === 'password' ? (
              <TextField
                label="Device password"
                type="password"
                value={password}
                onChange={(e) => setPassword(e.target.value)}
                autoComplete="off"
              />
            ) : (
              <KeyFields
                file={keyFile}
                error={keyError}
                passphrase={passphrase}
                onFile={(file, error) => {
                  setKeyFile(file);
                  setKeyError(error);
                }}
                onPassphrase={(value) => {
                  setPassphrase(value);
                  setKeyError(null);
                }}
              />
            )}
            <Button type="submit" variant="primary" disabled={!d.online} busy={opening}>
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
