import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { eventually } from '../../support/agent-process';
import { expectAccessible } from './support/browser';
import { DEVICE_PASSWORD, DeviceWorld } from './support/device-world';
import { type Box, inkOf } from './support/pixels';

// The web terminal as a person uses it, in Chromium at device scale 1 against a real agent: what it draws (every
// underscore, no black strip), signing in with a private key that never leaves the browser, leaving the terminal
// with the keyboard, and a refused sign-in told in words instead of an empty black box.

/** The terminal's background (terminalTheme.background in plugins/community/web/devices/terminal.tsx). */
const BACKGROUND: [number, number, number] = [0x0b, 0x0e, 0x13];

describe('web terminal: what it draws, key sign-in, keyboard and refusals', function () {
  this.timeout(180_000);
  let world: DeviceWorld;
  let page: Page;
  let keys: string;
  let terminalUrl: string;

  before(async () => {
    world = await DeviceWorld.start({ hostname: 'edge-term', deviceScaleFactor: 1 });
    page = world.page;
    keys = mkdtempSync(path.join(tmpdir(), 'gatehouse-web-keys-'));
    terminalUrl = `${world.server.url}/device/${world.uid}/terminal`;
  });
  after(async () => {
    await world?.stop();
    if (keys) rmSync(keys, { recursive: true, force: true });
  });

  /** The web terminal's screen and scrollback as lines, read from xterm's buffer. */
  const terminalLines = async () =>
    (await page.evaluate(`(() => {
      const term = document.querySelector('[data-testid="terminal"]')?.gatehouseTerminal;
      if (!term) return [];
      const buffer = term.buffer.active;
      const lines = [];
      for (let i = 0; i < buffer.length; i++) lines.push(buffer.getLine(i)?.translateToString(true) ?? '');
      return lines;
    })()`)) as string[];
  const terminalShows = (re: RegExp, what: string) =>
    eventually(
      async () => ((await terminalLines()).some((l) => re.test(l)) ? true : undefined),
      `the terminal to show ${what}`,
      20_000,
    );
  const signInWithPassword = async (password = DEVICE_PASSWORD) => {
    await page.goto(terminalUrl);
    await page.getByRole('heading', { name: 'Sign in to edge-term' }).waitFor();
    await page.getByLabel('Device user').fill('root');
    await page.getByLabel('Device password').fill(password);
    await page.getByRole('button', { name: 'Connect' }).click();
  };
  /** Where row `row` (of the visible screen) and column `col` are drawn, from xterm's rendered rows. */
  const cellBox = async (row: number, col: number): Promise<Box> =>
    (await page.evaluate(`(() => {
      const term = document.querySelector('[data-testid="terminal"]').gatehouseTerminal;
      const screen = document.querySelector('.xterm-screen').getBoundingClientRect();
      const rowBox = document.querySelectorAll('.xterm-rows > div')[${row}].getBoundingClientRect();
      const width = screen.width / term.cols;
      return { x: screen.x + ${col} * width, y: rowBox.y, width, height: rowBox.height };
    })()`)) as Box;

  it('says a refused sign-in in words and shows no terminal', async () => {
    await signInWithPassword('not-the-password');
    const refusal = page.getByRole('alert').filter({ hasText: 'Not signed in' });
    await refusal.waitFor({ timeout: 20_000 });
    expect(await refusal.textContent()).to.contain('Wrong user name or password.');
    // Back at the form, the user name kept, and no empty black terminal anywhere.
    await page.getByRole('heading', { name: 'Sign in to edge-term' }).waitFor();
    expect(await page.getByLabel('Device user').inputValue()).to.equal('root');
    expect(await page.getByTestId('terminal').count()).to.equal(0);
    expect(await page.locator('.terminal-shell').count()).to.equal(0);
    await expectAccessible(page, 'terminal sign-in refused');
  });

  it('draws every underscore at device scale 1, and no strip of another colour under the rows', async () => {
    await signInWithPassword();
    await page.getByText('Connected as root').waitFor({ timeout: 20_000 });
    expect(await page.evaluate('window.devicePixelRatio')).to.equal(1);
    await page.keyboard.type('clear; echo x86_64; echo __init__\n');
    await terminalShows(/^__init__$/, '__init__');
    const lines = await terminalLines();
    const viewportY = (await page.evaluate(
      `document.querySelector('[data-testid="terminal"]').gatehouseTerminal.buffer.active.viewportY`,
    )) as number;
    const row = lines.indexOf('x86_64') - viewportY;
    expect(row).to.be.at.least(0);

    const ink = async (col: number) => inkOf(page, await cellBox(row, col), BACKGROUND);
    const underscore = await ink(3);
    const litRows = underscore.lit.map((n, y) => (n > 0 ? y : -1)).filter((y) => y >= 0);
    // The underscore is a horizontal stroke across the cell, in its lower part.
    expect(litRows.length, `the _ cell is blank: ${JSON.stringify(underscore.lit)}`).to.be.at.least(1);
    expect(Math.max(...underscore.lit)).to.be.at.least(Math.floor(underscore.width / 2));
    expect(Math.min(...litRows)).to.be.at.least(underscore.height / 2);
    // The reading tells ink from no ink: the x has some, the cell after the text has none.
    expect((await ink(0)).lit.some((n) => n > 0)).to.equal(true);
    expect((await ink(7)).lit.every((n) => n === 0)).to.equal(true);
    // Both underscores of __init__ and the two after it, one row further down.
    for (const col of [0, 1, 6, 7]) {
      const cell = await inkOf(page, await cellBox(row + 1, col), BACKGROUND);
      expect(
        cell.lit.some((n) => n > 0),
        `__init__ column ${col}`,
      ).to.equal(true);
    }

    // Whatever height the window leaves, the space below the last row is the terminal's own background.
    for (const height of [900, 787, 733]) {
      await page.setViewportSize({ width: 1280, height });
      await page.waitForTimeout(300);
      const frame = (await page.evaluate(`(() => {
        const shell = document.querySelector('.terminal-shell').getBoundingClientRect();
        const screen = document.querySelector('.xterm-screen').getBoundingClientRect();
        return { shell: { x: shell.x, y: shell.y, width: shell.width, height: shell.height },
                 screenBottom: screen.bottom, screenRight: screen.right };
      })()`)) as { shell: Box; screenBottom: number; screenRight: number };
      const inner = {
        x: frame.shell.x + 1,
        y: frame.shell.y + 1,
        right: frame.shell.x + frame.shell.width - 1,
      };
      const bottom = frame.shell.y + frame.shell.height - 1;
      const below = await inkOf(
        page,
        {
          // Inside the frame's rounded corners (radius 10 px), where its border curves in.
          x: inner.x + 12,
          y: Math.ceil(frame.screenBottom),
          width: inner.right - inner.x - 24,
          height: Math.max(1, Math.floor(bottom - frame.screenBottom)),
        },
        BACKGROUND,
      );
      expect(
        below.foreign.every((n) => n === 0),
        `at ${height} px high, pixel rows below the terminal rows differ from its background: ${JSON.stringify(below.foreign)}`,
      ).to.equal(true);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('keeps Tab for the shell, and Esc then Tab leaves the terminal (Shift+Tab backwards)', async () => {
    const inTerminal = () =>
      page.evaluate(`document.querySelector('[data-testid="terminal"]').contains(document.activeElement)`);
    await page.getByTestId('terminal').click();
    expect(await inTerminal()).to.equal(true);
    // Tab completes in the shell: `ech<Tab>` becomes `echo`.
    await page.keyboard.type('ech');
    await page.keyboard.press('Tab');
    await page.keyboard.type(' tab-$((3 * 3))\n');
    await terminalShows(/^tab-9$/, 'the command completed with Tab');
    expect(await inTerminal()).to.equal(true);

    await page.keyboard.press('Escape');
    await page.keyboard.press('Tab');
    expect(await inTerminal()).to.equal(false);
    expect(await page.evaluate('document.activeElement === document.body')).to.equal(false);
    // Backwards it reaches what comes before the terminal, and plain Tab from there goes back in.
    await page.getByTestId('terminal').click();
    expect(await inTerminal()).to.equal(true);
    await page.keyboard.press('Escape');
    await page.keyboard.press('Shift+Tab');
    expect(await page.evaluate('document.activeElement?.textContent')).to.equal('Disconnect');
    await page.keyboard.press('Tab');
    expect(await inTerminal()).to.equal(true);
    expect(
      await page.getByText(/To leave the terminal with the keyboard, press\s*Esc\s*then\s*Tab/).count(),
    ).to.equal(1);
  });

  /** A key made by the real ssh-keygen and registered as a namespace public key for every user and host. */
  const registeredKey = async (name: string, type: 'ed25519' | 'ecdsa' | 'rsa', passphrase = '') => {
    const file = path.join(keys, name);
    execFileSync('ssh-keygen', ['-q', '-t', type, '-N', passphrase, '-C', `${name}@laptop`, '-f', file]);
    const line = readFileSync(`${file}.pub`, 'utf8').trim();
    const created = await world.api('/api/sshkeys/public-keys', {
      method: 'POST',
      body: JSON.stringify({
        name,
        data: Buffer.from(line).toString('base64'),
        username: '.*',
        filter: { hostname: '.*' },
      }),
    });
    expect(created.status).to.equal(200);
    return { file, line, secret: readFileSync(file, 'utf8') };
  };

  /** Everything the page sends: request bodies and WebSocket frames, to prove what never leaves it. */
  const outgoing: string[] = [];
  const incoming: string[] = [];
  let watching = false;
  const watch = () => {
    if (watching) return;
    watching = true;
    page.on('request', (request) => outgoing.push(`${request.url()} ${request.postData() ?? ''}`));
    page.on('websocket', (ws) => {
      outgoing.push(ws.url());
      ws.on('framesent', (frame) => outgoing.push(String(frame.payload)));
      ws.on('framereceived', (frame) => incoming.push(String(frame.payload)));
    });
  };

  const signInWithKey = async (file: string, passphrase?: string) => {
    await page.goto(terminalUrl);
    await page.getByRole('heading', { name: 'Sign in to edge-term' }).waitFor();
    await page.getByRole('radio', { name: 'Private key' }).check();
    await page.getByLabel('Private key file').setInputFiles(file);
    if (passphrase !== undefined) await page.getByLabel('Key passphrase').fill(passphrase);
    await page.getByRole('button', { name: 'Connect' }).click();
  };

  it('signs in with a passphrase-protected Ed25519 key read in the browser; only a signature is sent', async () => {
    watch();
    const key = await registeredKey('laptop-ed25519', 'ed25519', 'key-passphrase-1');
    await page.goto(terminalUrl);
    await page.getByRole('radio', { name: 'Private key' }).check();
    await page.getByLabel('Private key file').setInputFiles(key.file);
    const fingerprint = execFileSync('ssh-keygen', ['-l', '-f', `${key.file}.pub`], {
      encoding: 'utf8',
    }).split(' ')[1];
    await page.getByText(`ssh-ed25519 key ${fingerprint}, protected by a passphrase.`).waitFor();
    await expectAccessible(page, 'terminal key sign-in form');

    await page.getByLabel('Key passphrase').fill('not-the-passphrase');
    await page.getByRole('button', { name: 'Connect' }).click();
    await page.getByText('Wrong passphrase for this key.').waitFor();

    outgoing.length = 0;
    incoming.length = 0;
    await page.getByLabel('Key passphrase').fill('key-passphrase-1');
    await page.getByRole('button', { name: 'Connect' }).click();
    await page.getByText('Connected as root').waitFor({ timeout: 20_000 });
    await page.keyboard.type('echo by-key-$((40 + 2))\n');
    await terminalShows(/^by-key-42$/, 'the command run after a key sign-in');

    const sent = outgoing.join('\n');
    const body = key.secret.split('\n').filter((l) => l && !l.startsWith('-----'));
    for (const line of body) expect(sent).to.not.include(line.slice(0, 40));
    expect(sent).to.not.include('key-passphrase-1');
    expect(sent).to.include(key.line.split(' ')[1] as string);

    // What the browser signed is a standard SSHSIG signature: the real ssh-keygen checks it.
    const challenge = incoming
      .map((f) => (f.startsWith('{') ? JSON.parse(f) : {}))
      .find((f) => f.type === 'challenge');
    const answer = outgoing
      .map((f) => (f.startsWith('{') ? JSON.parse(f) : {}))
      .find((f) => f.type === 'signature');
    expect(challenge?.namespace).to.equal('gatehouse-web-terminal');
    const sshString = (b: Buffer) =>
      Buffer.concat([Buffer.from([0, 0, (b.length >> 8) & 255, b.length & 255]), b]);
    const armored = Buffer.concat([
      Buffer.from('SSHSIG'),
      Buffer.from([0, 0, 0, 1]),
      sshString(Buffer.from(key.line.split(' ')[1] as string, 'base64')),
      sshString(Buffer.from('gatehouse-web-terminal')),
      sshString(Buffer.alloc(0)),
      sshString(Buffer.from('sha512')),
      sshString(Buffer.from(answer.signature, 'base64')),
    ]).toString('base64');
    const sigFile = path.join(keys, 'browser.sig');
    writeFileSync(
      sigFile,
      `-----BEGIN SSH SIGNATURE-----\n${armored.match(/.{1,70}/g)?.join('\n')}\n-----END SSH SIGNATURE-----\n`,
    );
    const checked = execFileSync(
      'ssh-keygen',
      ['-Y', 'check-novalidate', '-n', 'gatehouse-web-terminal', '-s', sigFile],
      { input: Buffer.from(challenge.nonce, 'base64'), encoding: 'utf8' },
    );
    expect(checked).to.match(/Good "gatehouse-web-terminal" signature/);

    const sessions = (await (await world.api('/api/sessions?per_page=100')).json()) as {
      authenticated: boolean;
      type: string;
      events: { types: string[] };
    }[];
    expect(sessions.some((s) => s.type === 'web' && s.authenticated)).to.equal(true);
  });

  for (const type of ['ecdsa', 'rsa'] as const) {
    it(`signs in with an ${type} key read in the browser`, async () => {
      const key = await registeredKey(`laptop-${type}`, type);
      await signInWithKey(key.file);
      await page.getByText('Connected as root').waitFor({ timeout: 20_000 });
      await page.keyboard.type(`echo ${type}-$((6 * 7))\n`);
      await terminalShows(new RegExp(`^${type}-42$`), `the command run after an ${type} key sign-in`);
    });
  }

  it('says which key is not registered, and what a public key or PEM file is, without connecting', async () => {
    const stranger = path.join(keys, 'stranger');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', stranger]);
    await signInWithKey(stranger);
    const refusal = page.getByRole('alert').filter({ hasText: 'Not signed in' });
    await refusal.waitFor({ timeout: 20_000 });
    expect(await refusal.textContent()).to.match(
      /not among the namespace's public keys for root on edge-term/,
    );
    expect(await page.getByTestId('terminal').count()).to.equal(0);

    await page.getByLabel('Private key file').setInputFiles(`${stranger}.pub`);
    await page.getByText('This is a public key. Choose the private key file').waitFor();
    const pem = path.join(keys, 'pem');
    execFileSync('ssh-keygen', ['-q', '-t', 'ecdsa', '-N', '', '-m', 'PEM', '-f', pem]);
    await page.getByLabel('Private key file').setInputFiles(pem);
    await page.getByText('This key is in PEM format.').waitFor();
    await expectAccessible(page, 'terminal key refused');
  });

  // Last: it leaves this browser's address refused for a while, as the SSH gateway would.
  it('tells a browser refused for failed sign-ins how long to wait, and opens no terminal', async function () {
    // Penalty time drains as real time passes, so on a loaded machine, where each attempt takes longer, the block
    // comes a few attempts later: the loop allows for that, the refusal it waits for is the same.
    this.timeout(300_000);
    let said = '';
    for (let i = 0; i < 40 && !/too many failed sign-ins/.test(said); i++) {
      await signInWithPassword(`not-it-${i}`);
      const refusal = page.getByRole('alert').filter({ hasText: 'Not signed in' });
      await refusal.waitFor({ timeout: 20_000 });
      said = (await refusal.textContent()) ?? '';
    }
    expect(said).to.match(/too many failed sign-ins from 127\.0\.0\.1; try again in \d+ seconds\./);
    // The right password opens nothing meanwhile, and the console says so in the same words.
    await signInWithPassword();
    const refusal = page.getByRole('alert').filter({ hasText: 'Not signed in' });
    await refusal.waitFor({ timeout: 20_000 });
    expect(await refusal.textContent()).to.match(
      /too many failed sign-ins from 127\.0\.0\.1; try again in \d+ seconds\./,
    );
    expect(await page.getByTestId('terminal').count()).to.equal(0);
    await expectAccessible(page, 'terminal source refused');
  });
});
