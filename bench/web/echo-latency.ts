// Figure: keystroke echo latency in the web terminal vs a plain `ssh` session through the same gateway.
// Run: node --import tsx bench/web/echo-latency.ts [--keys 200]
//
// One run: a real `gatehouse serve`, a real agent (single-user mode) accepted in the namespace, then at the same
// bash prompt on the device:
//  - ssh: OpenSSH's client on a local pseudo-terminal made by util-linux `script`, as in a person's terminal
//    emulator; a key is one byte written to the terminal, its echo is that byte read back from it;
//  - web: the console's terminal page in Debian Chromium; a key is a real key event (playwright's keyboard,
//    through the DevTools protocol), timed from the keydown event's own timestamp to the moment xterm has
//    parsed the echoed character into its buffer at the cursor;
//  - /ws/ssh alone: the same WebSocket protocol from a Node client (package ws), no browser, which splits the
//    web figure into the gateway's share and the browser's.
// Keys go one at a time (the next after the previous echo), so the figures are round trips, not throughput.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { completeSetup, launchBrowser } from '../../test/e2e/web/support/browser';
import { startConsoleServer } from '../../test/e2e/web/support/console-server';
import { AgentProcess, DEVICE_AGENT_PASSWORD, eventually } from '../../test/support/agent-process';
import { clientOptions, passwordOptions } from '../../test/support/openssh';

const keys = Number(process.argv[process.argv.indexOf('--keys') + 1] ?? 200) || 200;
const password = DEVICE_AGENT_PASSWORD;
const letters = 'abcdefghijklmnopqrstuvwxyz';

function stats(values: number[]): { median: number; p90: number; min: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return { median: at(0.5), p90: at(0.9), min: sorted[0] ?? 0, max: sorted[sorted.length - 1] ?? 0 };
}

/** Echo round trips of `count` keys through `ssh` on a local PTY. */
async function sshEcho(port: number, target: string, count: number): Promise<number[]> {
  // One shell command line for script(1); none of the options has a space in it.
  const ssh = [
    'sshpass -e ssh',
    ...clientOptions({ quiet: true }),
    ...passwordOptions(),
    `-p ${port} ${target}@127.0.0.1`,
  ].join(' ');
  const child: ChildProcessWithoutNullStreams = spawn('script', ['-q', '-f', '-e', '-c', ssh, '/dev/null'], {
    env: { ...process.env, SSHPASS: password, TERM: 'xterm-256color' },
  });
  let out = '';
  let waiter: (() => void) | undefined;
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString('latin1');
    waiter?.();
  });
  const until = (test: () => boolean, what: string) =>
    new Promise<void>((resolve, reject) => {
      if (test()) return resolve();
      const timer = setTimeout(() => reject(new Error(`ssh: no ${what}; output so far:\n${out}`)), 20_000);
      waiter = () => {
        if (test()) {
          clearTimeout(timer);
          waiter = undefined;
          resolve();
        }
      };
    });
  try {
    // A marker the shell prints once it reads input proves the prompt is there.
    child.stdin.write('echo READY-$((40 + 2))\r');
    await until(() => out.includes('READY-42'), 'shell prompt');
    await new Promise((r) => setTimeout(r, 300));
    const times: number[] = [];
    for (let i = 0; i < count; i++) {
      if (i > 0 && i % 40 === 0) {
        // Ctrl+U clears the line so it never wraps; its redraw is left to settle before the next key.
        child.stdin.write('\x15');
        await new Promise((r) => setTimeout(r, 100));
      }
      const key = letters[i % letters.length] ?? 'a';
      const from = out.length;
      const start = process.hrtime.bigint();
      child.stdin.write(key);
      await until(() => out.indexOf(key, from) !== -1, `echo of ${key}`);
      times.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    child.stdin.write('\x15exit\r');
    return times;
  } finally {
    setTimeout(() => child.kill('SIGKILL'), 2000).unref();
  }
}

/** Echo round trips of `count` keys over GET /ws/ssh from Node, the console's protocol without a browser. */
async function socketEcho(base: string, token: string, target: string, count: number): Promise<number[]> {
  const issued = await fetch(`${base}/api/terminal/tickets`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ target }),
  });
  if (!issued.ok) throw new Error(`POST /api/terminal/tickets answered ${issued.status}`);
  const { ticket } = (await issued.json()) as { ticket: string };
  const query = new URLSearchParams({ ticket, cols: '120', rows: '40' });
  const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/ws/ssh?${query.toString()}`);
  let out = '';
  let waiter: (() => void) | undefined;
  ws.on('message', (data: Buffer, binary: boolean) => {
    if (!binary) return;
    out += data.toString('latin1');
    waiter?.();
  });
  const until = (test: () => boolean, what: string) =>
    new Promise<void>((resolve, reject) => {
      if (test()) return resolve();
      const timer = setTimeout(
        () => reject(new Error(`/ws/ssh: no ${what}; output so far:\n${out}`)),
        20_000,
      );
      waiter = () => {
        if (test()) {
          clearTimeout(timer);
          waiter = undefined;
          resolve();
        }
      };
    });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  try {
    ws.send(JSON.stringify({ type: 'auth', password }));
    ws.send(Buffer.from('echo READY-$((40 + 2))\r'), { binary: true });
    await until(() => out.includes('READY-42'), 'shell prompt');
    await new Promise((r) => setTimeout(r, 300));
    const times: number[] = [];
    for (let i = 0; i < count; i++) {
      if (i > 0 && i % 40 === 0) {
        ws.send(Buffer.from('\x15'), { binary: true });
        await new Promise((r) => setTimeout(r, 100));
      }
      const key = letters[i % letters.length] ?? 'a';
      const from = out.length;
      const start = process.hrtime.bigint();
      ws.send(Buffer.from(key), { binary: true });
      await until(() => out.indexOf(key, from) !== -1, `echo of ${key}`);
      times.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    return times;
  } finally {
    ws.close();
  }
}

const server = await startConsoleServer();
const browser = await launchBrowser();
const keyDir = mkdtempSync(path.join(tmpdir(), 'gatehouse-echo-'));
let agent: AgentProcess | undefined;
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await completeSetup(page, server.setupUrl);
  await page.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
  const auth = JSON.parse((await page.evaluate('localStorage.getItem("gatehouse.auth")')) as string) as {
    token: string;
    tenant: string;
    user: string;
  };
  const api = (p: string, init: RequestInit = {}) =>
    fetch(`${server.url}${p}`, { ...init, headers: { Authorization: `Bearer ${auth.token}` } });
  agent = AgentProcess.device({
    server: server.url,
    tenant: auth.tenant,
    keyPath: path.join(keyDir, 'device.key'),
    identity: '02:00:00:00:00:77',
    hostname: 'echo-bench',
  });
  await agent.waitFor(/pending acceptance/, 60_000);
  const uid = await agent.uid();
  const kind = (await api(`/api/devices/${uid}`)).status === 200 ? 'devices' : 'containers';
  const accepted = await api(`/api/${kind}/${uid}/accept`, { method: 'PATCH' });
  if (!accepted.ok) throw new Error(`accepting the device answered ${accepted.status}`);
  await eventually(
    async () =>
      ((await (await api(`/api/${kind}/${uid}`)).json()) as { online: boolean }).online || undefined,
    'the device to be online',
    60_000,
  );
  const target = `root@${auth.user}.echo-bench`;

  const ssh = stats(await sshEcho(server.sshPort, target, keys));
  const socket = stats(await socketEcho(server.url, auth.token, target, keys));

  await page.goto(`${server.url}/${kind === 'devices' ? 'device' : 'container'}/${uid}/terminal`);
  await page.getByLabel('Device password').fill(password);
  await page.getByRole('button', { name: 'Connect' }).click();
  await page.getByText('Connected as root').waitFor({ timeout: 30_000 });
  await page.getByTestId('terminal').click();
  await page.keyboard.type('echo READY-$((40 + 2))');
  await page.keyboard.press('Enter');
  // Predicates as functions: the console's Content-Security-Policy refuses the eval a string predicate needs.
  await page.waitForFunction(() => {
    const terminal = document.querySelector('[data-testid="terminal"]') as unknown as {
      gatehouseTerminal: {
        buffer: {
          active: { length: number; getLine(i: number): { translateToString(trim: boolean): string } };
        };
      };
    };
    const b = terminal.gatehouseTerminal.buffer.active;
    for (let i = 0; i < b.length; i++) if (b.getLine(i).translateToString(true) === 'READY-42') return true;
    return false;
  });
  await page.waitForTimeout(300);
  // In the page: the keydown's timestamp, then the first parse that puts that character just left of the cursor.
  await page.evaluate(`(() => {
    const term = document.querySelector('[data-testid="terminal"]').gatehouseTerminal;
    window.__echo = [];
    let pending;
    term.textarea.addEventListener('keydown', (e) => {
      if (e.key.length === 1) pending = { key: e.key, at: e.timeStamp, x: term.buffer.active.cursorX };
    }, true);
    term.onWriteParsed(() => {
      if (!pending) return;
      const b = term.buffer.active;
      if (b.cursorX !== pending.x + 1) return;
      const cell = b.getLine(b.baseY + b.cursorY)?.getCell(b.cursorX - 1);
      if (cell?.getChars() !== pending.key) return;
      window.__echo.push(performance.now() - pending.at);
      pending = undefined;
    });
  })()`);
  for (let i = 0; i < keys; i++) {
    if (i > 0 && i % 40 === 0) {
      await page.keyboard.press('Control+KeyU');
      await page.waitForTimeout(100);
    }
    await page.keyboard.press(letters[i % letters.length] ?? 'a');
    await page.waitForFunction(
      (n) => (window as unknown as { __echo: number[] }).__echo.length === n,
      i + 1,
      {
        polling: 5,
        timeout: 20_000,
      },
    );
  }
  const web = stats((await page.evaluate('window.__echo')) as number[]);
  await page.keyboard.press('Control+KeyU');
  await page.keyboard.type('exit');
  await page.keyboard.press('Enter');

  const f = (n: number) => n.toFixed(2);
  console.log(`| keystroke echo, ${keys} keys one at a time | median | p90 | min–max |`);
  console.log('|---|---|---|---|');
  console.log(
    `| plain \`ssh\` through the gateway | ${f(ssh.median)} ms | ${f(ssh.p90)} ms | ${f(ssh.min)}–${f(ssh.max)} ms |`,
  );
  console.log(
    `| /ws/ssh from a Node client (no browser) | ${f(socket.median)} ms | ${f(socket.p90)} ms | ${f(socket.min)}–${f(socket.max)} ms |`,
  );
  console.log(
    `| web terminal (Chromium, xterm.js, /ws/ssh) | ${f(web.median)} ms | ${f(web.p90)} ms | ${f(web.min)}–${f(web.max)} ms |`,
  );
  console.log(
    `\nweb terminal / ssh: median ${(web.median / ssh.median).toFixed(2)}x, p90 ${(web.p90 / ssh.p90).toFixed(2)}x`,
  );
  console.log(`/ws/ssh alone / ssh: median ${(socket.median / ssh.median).toFixed(2)}x`);
} finally {
  await agent?.stop();
  await browser.close();
  await server.stop();
  rmSync(keyDir, { recursive: true, force: true });
}
